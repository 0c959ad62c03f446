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

/** Tiny dollar amounts carry many digits; a smaller font keeps them whole in a narrow card. */
function lengthClass(value: string | undefined): string {
  if (!value || value.length <= 8) return '';
  return value.length <= 10 ? ' is-long' : ' is-longer';
}

export function StatCard({ title, value, raw, detail, testId, accent }: Props) {
  return (
    <section class={`card stat${accent ? ' stat-accent' : ''}`} data-testid={testId} aria-busy={value === undefined}>
      <h3 class="stat-title">{title}</h3>
      {/* One element in both states: swapping elements let the value appear below the placeholder for a frame. */}
      <p class={`stat-value${lengthClass(value)}`} data-testid={`${testId}-value`} data-value={raw} title={value}>
        {value === undefined ? <span class="skeleton stat-value-skeleton" aria-hidden="true" /> : value}
      </p>
      <p class="stat-detail">{value === undefined ? '\u00a0' : (detail ?? '\u00a0')}</p>
    </section>
  );
}
