import type { ComponentChildren } from 'preact';

interface Props {
  title: string;
  /** Formatted value; undefined while loading (a placeholder of the same height is shown). */
  value: string | undefined;
  /** The raw number, for tests and for screen readers that read the title attribute. */
  raw?: number;
  detail?: ComponentChildren;
  testId: string;
  accent?: boolean;
}

export function StatCard({ title, value, raw, detail, testId, accent }: Props) {
  return (
    <section class={`card stat${accent ? ' stat-accent' : ''}`} data-testid={testId} aria-busy={value === undefined}>
      <h3 class="stat-title">{title}</h3>
      {value === undefined ? (
        <div class="skeleton stat-value-skeleton" aria-hidden="true" />
      ) : (
        <p class="stat-value" data-testid={`${testId}-value`} data-value={raw}>
          {value}
        </p>
      )}
      <p class="stat-detail">{value === undefined ? '\u00a0' : detail ?? '\u00a0'}</p>
    </section>
  );
}
