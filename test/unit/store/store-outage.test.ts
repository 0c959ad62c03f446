import { isStoreOutage } from '../../../lambda/store/dynamodb/store-outage';
import { UnprocessedError } from '../../../lambda/store/dynamodb/unprocessed';
import { DynamoError, DynamoTimeoutError } from '../../../lambda/store/dynamodb/wire/dynamo-error';

/**
 * Which store errors are an outage (a 503 with Retry-After in the management
 * API) and which are a refusal or a bug (answered as such, or a 500). The
 * management API's answers to a store that really fails are tested in
 * test/reliability/management-store-outage.test.ts.
 */
const networkError = (code: string) => Object.assign(new Error(code), { code });

describe('isStoreOutage', () => {
  it.each([
    ['throttling', new DynamoError('ThrottlingException', 'slow down', 400)],
    ['provisioned throughput exceeded', new DynamoError('ProvisionedThroughputExceededException', 'exceeded', 400)],
    ['a request limit', new DynamoError('RequestLimitExceeded', 'limit', 400)],
    ['a conflicting transaction', new DynamoError('TransactionConflictException', 'conflict', 400)],
    ['an internal server error', new DynamoError('InternalServerError', 'internal', 500)],
    ['service unavailable', new DynamoError('ServiceUnavailable', 'unavailable', 503)],
    ['a 5xx answer that is not JSON', new DynamoError('InvalidResponse', 'not JSON', 502)],
    ['no answer in time', new DynamoTimeoutError(5000)],
    ['connection refused', networkError('ECONNREFUSED')],
    ['connection reset', networkError('ECONNRESET')],
    ['host not found', networkError('ENOTFOUND')],
    ['a batch left unprocessed after its retries', new UnprocessedError(3, 'keys')],
    [
      'a transaction cancelled by throttling only',
      new DynamoError('TransactionCanceledException', 'cancelled', 400, undefined, ['None', 'ThrottlingError']),
    ],
  ])('%s is an outage', (_name, error) => {
    expect(isStoreOutage(error)).toBe(true);
  });

  it.each([
    ['a failed condition', new DynamoError('ConditionalCheckFailedException', 'condition', 400)],
    ['a malformed request', new DynamoError('ValidationException', 'invalid', 400)],
    ['a refused signature', new DynamoError('InvalidSignatureException', 'signature', 400)],
    ['a missing table', new DynamoError('ResourceNotFoundException', 'no table', 400)],
    [
      'a transaction cancelled by a failed condition as well',
      new DynamoError('TransactionCanceledException', 'cancelled', 400, undefined, [
        'ConditionalCheckFailed',
        'ThrottlingError',
      ]),
    ],
    [
      'a transaction cancelled for no stated reason',
      new DynamoError('TransactionCanceledException', 'cancelled', 400, undefined, ['None']),
    ],
    ['a bug (TypeError)', new TypeError("Cannot read properties of undefined (reading 'items')")],
    ['a plain error', new Error('boom')],
    ['a thrown string', 'boom'],
    ['nothing', undefined],
  ])('%s is not', (_name, error) => {
    expect(isStoreOutage(error)).toBe(false);
  });
});
