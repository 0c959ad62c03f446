/** Placeholder rows with the same height as real ones, so the page does not jump when data arrives. */
export function SkeletonRows({ rows, label = 'Loading…' }: { rows: number; label?: string }) {
  return (
    <div class="skeleton-rows" role="status" aria-label={label}>
      {Array.from({ length: rows }, (_, i) => (
        <div key={i} class="skeleton skeleton-row" />
      ))}
    </div>
  );
}
