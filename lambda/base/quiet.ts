/** Keeps an early rejection from being reported as unhandled before the step that needs it awaits it. */
export function quiet<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}
