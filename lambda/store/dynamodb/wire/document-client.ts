import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { retryPolicies, withRetries } from '../../../retry';
import { itemFromWire, OPERATIONS } from './operations';
import { SigV4Signer, type Credentials } from './sigv4';

/** What the stores need of a document client: `send(command)`. */
export type DocumentClient = Pick<DynamoDBDocumentClient, 'send'>;

/**
 * Refusals: DynamoDB did not apply the request, so any operation may be sent
 * again. A conflict with a transaction in flight on the same item is one too,
 * as is a transaction cancelled only by such conflicts or throttling.
 */
const REFUSED_TYPES = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded', 'TransactionConflictException', 'TransactionInProgressException']);
const REFUSED_REASONS = new Set(['None', 'TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']);
/** Network errors where the request never reached DynamoDB. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);
const ATTEMPT_TIMEOUT_MS = 5_000;

class DynamoError extends Error {
  constructor(
    name: string,
    message: string,
    readonly status?: number,
    /** The item as it was, when a failed condition asked for it (`ReturnValuesOnConditionCheckFailure: ALL_OLD`). */
    readonly item?: Record<string, unknown>,
    /** Why each action of a cancelled transaction failed (`None` for those that would have succeeded). */
    readonly reasons?: string[],
  ) {
    super(message);
    this.name = name;
  }
}

/** The stored item a failed condition was checked against, if the request asked for it. */
export function conditionFailedItem(error: unknown): Record<string, unknown> | undefined {
  return error instanceof DynamoError && error.name === 'ConditionalCheckFailedException' ? error.item : undefined;
}

const sentAtMostOnceCommands = new WeakSet<object>();

/**
 * Marks a command whose repetition would be wrong, such as an `ADD` that must
 * count exactly once: after a lost answer or a 5xx it may have been applied,
 * so it is retried only when DynamoDB refused it or it never left this process.
 * (The rate limiter's `ADD` is not marked: counting one request twice errs on
 * the safe side, and failing it would refuse the request.)
 */
export function sentAtMostOnce<T extends object>(command: T): T {
  sentAtMostOnceCommands.add(command);
  return command;
}

function mayRetry(error: unknown, idempotent: boolean): boolean {
  if (error instanceof DynamoError) {
    const refusedTransaction = error.name === 'TransactionCanceledException' && (error.reasons ?? []).every((reason) => REFUSED_REASONS.has(reason));
    return REFUSED_TYPES.has(error.name) || refusedTransaction || (idempotent && (error.status ?? 500) >= 500);
  }
  return idempotent || NOT_SENT_CODES.has((error as NodeJS.ErrnoException).code ?? '');
}

/**
 * Binary attributes travel as base64 in the JSON protocol. The holder's own
 * value is checked because JSON.stringify applies Buffer's toJSON first.
 */
function encodeBinary(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const original = this[key];
  return original instanceof Uint8Array ? Buffer.from(original.buffer, original.byteOffset, original.byteLength).toString('base64') : value;
}

function decodeBinary(key: string, value: unknown): unknown {
  if (key === 'B' && typeof value === 'string') return Buffer.from(value, 'base64');
  if (key === 'BS' && Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.map((v) => Buffer.from(v, 'base64'));
  return value;
}

/**
 * A lean DynamoDB document client over the service's JSON protocol: the same
 * commands and results as `@aws-sdk/lib-dynamodb`, without the SDK's
 * per-call middleware stack, which cost about five times a bare HTTPS request
 * in CPU (bench/RESULTS.md). It signs with SigV4, keeps connections alive and
 * retries throttling, 5xx and network errors with jittered backoff.
 */
export class LeanDocumentClient implements DocumentClient {
  private readonly url: URL;
  private readonly signer: SigV4Signer;
  private readonly agent: HttpAgent | HttpsAgent;

  constructor(private readonly options: { region: string; endpoint?: string; credentials: () => Credentials }) {
    this.url = new URL(options.endpoint ?? `https://dynamodb.${options.region}.amazonaws.com`);
    this.signer = new SigV4Signer(options.region, 'dynamodb');
    const agentOptions = { keepAlive: true, maxSockets: 256, timeout: 50_000 };
    this.agent = this.url.protocol === 'https:' ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
  }

  send: DocumentClient['send'] = (async (command: { input: Record<string, unknown> }) => {
    const operation = OPERATIONS.find((candidate) => command instanceof candidate.command);
    if (!operation) throw new Error(`Unsupported DynamoDB command ${command.constructor.name}`);
    const body = JSON.stringify(operation.input(command.input), encodeBinary);
    const idempotent = !sentAtMostOnceCommands.has(command);
    const output = await this.call(operation.name, body, idempotent);
    return operation.output(output);
  }) as DocumentClient['send'];

  private call(operation: string, body: string, idempotent: boolean): Promise<Record<string, unknown>> {
    return withRetries(() => this.post(operation, body), retryPolicies.storeCall((error) => mayRetry(error, idempotent)));
  }

  private post(operation: string, body: string): Promise<Record<string, unknown>> {
    const headers = this.signer.sign({
      host: this.url.host,
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `DynamoDB_20120810.${operation}` },
      body,
      credentials: this.options.credentials(),
      now: new Date(),
    });
    headers['content-length'] = String(Buffer.byteLength(body));
    const send = this.url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const request = send(this.url, { method: 'POST', headers, agent: this.agent, timeout: ATTEMPT_TIMEOUT_MS }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: Record<string, unknown>;
          try {
            parsed = text ? JSON.parse(text, decodeBinary) : {};
          } catch {
            return reject(new DynamoError('InvalidResponse', `DynamoDB answered ${response.statusCode} with a body that is not JSON`, response.statusCode));
          }
          const status = response.statusCode ?? 500;
          if (status < 300) return resolve(parsed);
          const type = String(parsed.__type ?? 'UnknownError').split('#').pop()!;
          const message = String(parsed.message ?? parsed.Message ?? `DynamoDB answered ${status}`);
          const reasons = Array.isArray(parsed.CancellationReasons) ? parsed.CancellationReasons.map((reason: { Code?: string }) => String(reason.Code ?? 'None')) : undefined;
          reject(new DynamoError(type, message, status, parsed.Item ? itemFromWire(parsed.Item) : undefined, reasons));
        });
      });
      request.on('timeout', () => request.destroy(Object.assign(new Error('DynamoDB did not answer in time'), { name: 'TimeoutError' })));
      request.on('error', reject);
      request.end(body);
    });
  }
}

/** Lambda provides the role's credentials in the environment; DynamoDB Local accepts any. */
export function environmentCredentials(env: NodeJS.ProcessEnv, local: boolean): () => Credentials {
  if (local) return () => ({ accessKeyId: 'local', secretAccessKey: 'local' });
  return () => {
    const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_SESSION_TOKEN: sessionToken } = env;
    if (!accessKeyId || !secretAccessKey) throw new Error('No AWS credentials in the environment (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)');
    return { accessKeyId, secretAccessKey, sessionToken };
  };
}
