import type { NativeError } from '../providers/types';

/**
 * The management API's one error shape (docs/management-api.md, "Errors"), whatever the route and
 * whatever went wrong: `{"error":{"code","message","field"}}`. `field` names the body field, query
 * parameter or path segment at fault, and is null when no single one is.
 */
export interface ManagementErrorBody {
  error: { code: ManagementErrorCode; message: string; field: string | null };
}

/** The code of each status the management API answers an error with. */
export const MANAGEMENT_ERROR_CODES = {
  400: 'invalid_request',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'body_too_large',
  429: 'rate_limited',
  500: 'internal_error',
  503: 'store_unavailable',
} as const;

export type ManagementErrorCode = (typeof MANAGEMENT_ERROR_CODES)[keyof typeof MANAGEMENT_ERROR_CODES];

function codeOf(status: number): ManagementErrorCode {
  const known: Record<number, ManagementErrorCode | undefined> = MANAGEMENT_ERROR_CODES;
  return known[status] ?? (status >= 500 ? 'internal_error' : 'invalid_request');
}

/** Renders an error the one mapper (pipeline/answer-errors.ts) has typed, in the management API's shape. */
export const managementErrors = {
  errorBody({ status, message, param }: NativeError): string {
    const body: ManagementErrorBody = { error: { code: codeOf(status), message, field: param ?? null } };
    return JSON.stringify(body);
  },
};
