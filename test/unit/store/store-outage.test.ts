import {
  ConditionalCheckFailedException,
  DynamoDBServiceException,
  InternalServerError,
  ProvisionedThroughputExceededException,
  RequestLimitExceeded,
  ResourceNotFoundException,
  ThrottlingException,
  TransactionCanceledException,
  TransactionConflictException,
} from '@aws-sdk/client-dynamodb';
import { isStoreOutage } from '../../../lambda/store/dynamodb/store-outage';
import { UnprocessedError } from '../../../lambda/store/dynamodb/unprocessed';

/**
 * Which store errors are an outage (a 503 with Retry-After in the management
 * API) and which are a refusal or a bug (answered as such, or a 500), over the
 * AWS SDK's exception types. The SDK building these from DynamoDB's answers on
 * the wire is tested in test/unit/store/document-client.test.ts; the management
 * API's answers to a store that really fails in
 * test/reliability/management-store-outage.test.ts.
 */
const networkError = (code: string) => Object.assign(new Error(code), { code });
const meta = (httpStatusCode: number) => ({ $metadata: { httpStatusCode } });
/** An answer of a type the SDK has no class for, as it builds one. */
const serviceError = (name: string, status: number) =>
  new DynamoDBServiceException({ name, $fault: status >= 500 ? 'server' : 'client', message: name, ...meta(status) });
const cancelled = (...codes: string[]) =>
  new TransactionCanceledException({
    message: 'cancelled',
    CancellationReasons: codes.map((Code) => ({ Code })),
    ...meta(400),
  });

describe('isStoreOutage', () => {
  it.each([
    ['throttling', new ThrottlingException({ message: 'slow down', ...meta(400) })],
    ['provisioned throughput exceeded', new ProvisionedThroughputExceededException({ message: 'x', ...meta(400) })],
    ['a request limit', new RequestLimitExceeded({ message: 'limit', ...meta(400) })],
    ['a conflicting transaction', new TransactionConflictException({ message: 'conflict', ...meta(400) })],
    ['an internal server error', new InternalServerError({ message: 'internal', ...meta(500) })],
    ['service unavailable', serviceError('ServiceUnavailable', 503)],
    [
      'a 5xx answer that is not DynamoDB JSON',
      Object.assign(new Error('Bad Gateway'), { name: 'Unknown', ...meta(502) }),
    ],
    ['no answer in time', Object.assign(new Error('socket timed out'), { name: 'TimeoutError' })],
    ['connection refused', networkError('ECONNREFUSED')],
    ['connection reset', networkError('ECONNRESET')],
    ['host not found', networkError('ENOTFOUND')],
    ['a batch left unprocessed after its retries', new UnprocessedError(3, 'keys')],
    ['a transaction cancelled by throttling only', cancelled('None', 'ThrottlingError')],
  ])('%s is an outage', (_name, error) => {
    expect(isStoreOutage(error)).toBe(true);
  });

  it.each([
    ['a failed condition', new ConditionalCheckFailedException({ message: 'condition', ...meta(400) })],
    ['a malformed request', serviceError('ValidationException', 400)],
    ['a refused signature', serviceError('InvalidSignatureException', 400)],
    ['a missing table', new ResourceNotFoundException({ message: 'no table', ...meta(400) })],
    ['a transaction cancelled by a failed condition as well', cancelled('ConditionalCheckFailed', 'ThrottlingError')],
    ['a transaction cancelled for no stated reason', cancelled('None')],
    ['a bug (TypeError)', new TypeError("Cannot read properties of undefined (reading 'items')")],
    ['a plain error', new Error('boom')],
    ['a thrown string', 'boom'],
    ['nothing', undefined],
  ])('%s is not', (_name, error) => {
    expect(isStoreOutage(error)).toBe(false);
  });
});
