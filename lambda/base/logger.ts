/**
 * Structured JSON log lines (CloudWatch and the local console read them alike).
 * Callers pass only fields that are safe to print: never headers, bodies or keys.
 */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

function line(level: string, message: string, fields?: Record<string, unknown>): string {
  // `timestamp` (RFC 3339) and `level` are what Lambda's JSON log format reads.
  return JSON.stringify({ timestamp: new Date().toISOString(), level: level.toUpperCase(), message, ...fields });
}

export const jsonLogger: Logger = {
  info: (message, fields) => process.stdout.write(line('info', message, fields) + '\n'),
  warn: (message, fields) => process.stdout.write(line('warn', message, fields) + '\n'),
  error: (message, fields) => process.stderr.write(line('error', message, fields) + '\n'),
};

/** The safe description of an error: its name and message, never request data. */
export function describeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { error: String(error) };
  const cause = error.cause as (Error & { code?: string }) | undefined;
  return {
    error: error.name,
    detail: error.message,
    ...(cause instanceof Error ? { cause: { name: cause.name, code: cause.code, message: cause.message } } : {}),
  };
}
