import type { ComponentChildren } from 'preact';

export function EmptyState({
  title,
  children,
  testId,
}: {
  title: string;
  children?: ComponentChildren;
  testId?: string;
}) {
  return (
    <div class="empty" data-testid={testId}>
      <p class="empty-title">{title}</p>
      {children && <div class="empty-body">{children}</div>}
    </div>
  );
}
