import type { NativeError } from '../types';

/**
 * The error types of AWS's JSON APIs, by the status the proxy answers with. The AWS SDK reads the
 * type from `x-amzn-ErrorType` and raises the exception class of that name (`ThrottlingException`,
 * `AccessDeniedException`, …), so a client handles the proxy's refusals as it handles the service's.
 * 402 (a budget used up) has no AWS status of its own: it is a quota, and the SDK does not retry it.
 */
const ERROR_TYPES: Record<number, string> = {
  400: 'ValidationException',
  401: 'UnrecognizedClientException',
  402: 'ServiceQuotaExceededException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  405: 'ValidationException',
  413: 'ValidationException',
  415: 'ValidationException',
  429: 'ThrottlingException',
  500: 'InternalServerException',
  502: 'InternalServerException',
  503: 'ServiceUnavailableException',
  504: 'ModelTimeoutException',
};

export function awsErrorType(status: number): string {
  return ERROR_TYPES[status] ?? (status >= 500 ? 'InternalServerException' : 'ValidationException');
}

/** `{"message": …}`: the body of every AWS JSON error. */
export function awsErrorBody({ message }: NativeError): string {
  return JSON.stringify({ message });
}

export function awsErrorHeaders({ status }: NativeError): Record<string, string> {
  return { 'x-amzn-errortype': awsErrorType(status) };
}
