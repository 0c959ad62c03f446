import { ApiError } from '../api';

function describe(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 403) return 'This token is not allowed to manage the account (it lacks the manage scope).';
    return error.message;
  }
  return error instanceof Error ? error.message : 'Something went wrong.';
}

/** An error announced to screen readers as it appears. Renders nothing when there is no error. */
export function ErrorMessage({ error, testId, onRetry }: { error: unknown; testId?: string; onRetry?: () => void }) {
  if (!error) return null;
  return (
    <div class="notice notice-error" role="alert" data-testid={testId}>
      <span>{describe(error)}</span>
      {onRetry && (
        <button type="button" class="button button-small" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}
