import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { retryPolicies, withRetries, type RetryPolicy } from '../../../retry';
import type { CredentialProvider } from './credentials';
import { DynamoError, DynamoTimeoutError, mayRetry } from './dynamo-error';
import { itemFromWire, OPERATIONS, type OperationName, type OutputOf, type StoreCommand } from './operations';
import { ServerClock } from './server-clock';
import { SigV4Signer } from './sigv4';

/** What the stores need of a DynamoDB client: the commands of `operations.ts` (plain data), each with its own result type. */
export interface DocumentClient {
  send<C extends StoreCommand>(command: C): Promise<OutputOf<C>>;
}

const ATTEMPT_TIMEOUT_MS = 5_000;

/**
 * Marks a command whose repetition would be wrong, such as an `ADD` that must
 * count exactly once: after a lost answer or a 5xx it may have been applied,
 * so it is retried only when DynamoDB refused it or it never left this process.
 * (The token gate's `ADD` is not marked: counting one request twice errs on
 * the safe side, and failing it would refuse the request.)
 */
export function sentAtMostOnce<T extends StoreCommand>(command: T): T {
  return { ...command, atMostOnce: true };
}

/**
 * A lean DynamoDB document client over the service's JSON protocol: the same
 * inputs and results as `@aws-sdk/lib-dynamodb`'s commands, without the SDK's
 * middleware stack, which runs on every call of the request path (docs/behaviour.md,
 * "The store client"). It signs with SigV4 (correcting the signing time
 * when DynamoDB says the local clock is off), keeps connections alive and
 * retries throttling, 5xx and network errors with jittered backoff
 * (`retryPolicies.storeCall`).
 */
export class LeanDocumentClient implements DocumentClient {
  private readonly url: URL;
  private readonly signer: SigV4Signer;
  private readonly clock: ServerClock;
  /** Where every request goes, as node:http options: read from the URL once, not on every call. */
  private readonly target: RequestOptions;
  private readonly sendRequest: typeof httpRequest;
  /** The retry policy of a command that may be applied twice, and of one sent at most once. */
  private readonly retries: { idempotent: RetryPolicy; atMostOnce: RetryPolicy };

  constructor(
    private readonly options: {
      region: string;
      endpoint?: string;
      credentials: CredentialProvider;
      localNow?: () => number;
    },
  ) {
    this.url = new URL(options.endpoint ?? `https://dynamodb.${options.region}.amazonaws.com`);
    this.signer = new SigV4Signer(options.region, 'dynamodb');
    this.clock = new ServerClock(options.localNow);
    const agentOptions = { keepAlive: true, maxSockets: 256, timeout: 50_000 };
    const secure = this.url.protocol === 'https:';
    this.sendRequest = secure ? httpsRequest : httpRequest;
    this.target = {
      protocol: this.url.protocol,
      hostname: this.url.hostname.replace(/^\[|\]$/g, ''),
      port: this.url.port || (secure ? 443 : 80),
      path: '/',
      method: 'POST',
      agent: secure ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions),
      timeout: ATTEMPT_TIMEOUT_MS,
    };
    this.retries = {
      idempotent: retryPolicies.storeCall((error) => mayRetry(error, true)),
      atMostOnce: retryPolicies.storeCall((error) => mayRetry(error, false)),
    };
  }

  async send<C extends StoreCommand>(command: C): Promise<OutputOf<C>> {
    const name = command.operation;
    const operation = OPERATIONS[name];
    if (!operation) throw new Error(`Unsupported DynamoDB operation ${String(name)}`);
    const body = JSON.stringify(operation.input(command.input));
    const output = await withRetries(
      () => this.post(name, body),
      command.atMostOnce ? this.retries.atMostOnce : this.retries.idempotent,
    );
    // The wire's answer, converted field by field as the SDK's document command would.
    return operation.output(output) as OutputOf<C>;
  }

  /** One attempt, signed anew (time and credentials) each time. */
  private async post(operation: OperationName, body: string): Promise<Record<string, unknown>> {
    const headers = this.signer.sign({
      host: this.url.host,
      target: `DynamoDB_20120810.${operation}`,
      body,
      credentials: await this.options.credentials(),
      now: this.clock.now(),
    });
    headers['content-length'] = String(Buffer.byteLength(body));
    return new Promise((resolve, reject) => {
      const request = this.sendRequest({ ...this.target, headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const answer = this.readAnswer(
            response,
            (chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)).toString('utf8'),
          );
          if (answer instanceof DynamoError) reject(answer);
          else resolve(answer);
        });
      });
      request.on('timeout', () => request.destroy(new DynamoTimeoutError(ATTEMPT_TIMEOUT_MS)));
      request.on('error', reject);
      request.end(body);
    });
  }

  private readAnswer(response: IncomingMessage, text: string): Record<string, unknown> | DynamoError {
    const status = response.statusCode ?? 500;
    let parsed: Record<string, unknown>;
    try {
      parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      return new DynamoError('InvalidResponse', `DynamoDB answered ${status} with a body that is not JSON`, status);
    }
    if (status < 300) return parsed;
    const stringField = (value: unknown) => (typeof value === 'string' ? value : undefined);
    const type = (stringField(parsed.__type) ?? 'UnknownError').split('#').pop()!;
    const message = stringField(parsed.message) ?? stringField(parsed.Message) ?? `DynamoDB answered ${status}`;
    const reasons = Array.isArray(parsed.CancellationReasons)
      ? parsed.CancellationReasons.map((reason: { Code?: string }) => String(reason.Code ?? 'None'))
      : undefined;
    const error = new DynamoError(type, message, status, parsed.Item ? itemFromWire(parsed.Item) : undefined, reasons);
    error.clockSkewCorrected = this.clock.correctFrom(type, response.headers.date);
    return error;
  }
}
