import { DeleteItem$, GetItem$, PutItem$, UpdateItem$, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { operation } from '@smithy/core/schema';
import { HttpRequest, HttpResponse } from '@smithy/core/transport';
import { fromBase64, toBase64 } from '@smithy/core/serde';
import { SignatureV4 } from '@smithy/signature-v4';

/** The single-item operations, with the SDK's schema of each (its errors are read by the SDK's protocol). */
const SCHEMAS = { GetItem: GetItem$, PutItem: PutItem$, UpdateItem: UpdateItem$, DeleteItem: DeleteItem$ } as const;
export type ItemOperation = keyof typeof SCHEMAS;

type OperationTuple = [number, string, string, number, unknown, unknown];
const schemaOf = (name: ItemOperation) => {
  const [, namespace, operationName, traits, input, output] = SCHEMAS[name] as unknown as OperationTuple;
  return operation(namespace, operationName, traits, input as never, output as never);
};

/** DynamoDB refuses a signature more than 5 minutes from its clock; the SDK corrects its own from the answer then. */
const SKEW_LIMIT_MS = 5 * 60_000;

type Value = Record<string, unknown>;

/**
 * Converts the binary values (`B`, `BS`) of attribute values, in place, between bytes and the wire's
 * base64 text. A walk of the attribute values alone: a `JSON.stringify` replacer or `JSON.parse`
 * reviver would be called for every value of the message and take the slow path for all of it.
 */
function convertBinaries(values: unknown, convert: (value: unknown) => unknown): void {
  if (!values || typeof values !== 'object') return;
  for (const value of Object.values(values as Value)) {
    const attribute = value as Value;
    if (attribute.B !== undefined) attribute.B = convert(attribute.B);
    else if (attribute.BS !== undefined) attribute.BS = (attribute.BS as unknown[]).map(convert);
    else if (attribute.M !== undefined) convertBinaries(attribute.M, convert);
    else if (attribute.L !== undefined) convertBinaries(attribute.L, convert);
  }
}

const asText = (bytes: unknown) => (bytes instanceof Uint8Array ? toBase64(bytes) : bytes);
const asBytes = (text: unknown) => (typeof text === 'string' ? fromBase64(text) : text);

/** The maps of attribute values a single-item input or output holds. */
const REQUEST_ITEMS = ['Key', 'Item', 'ExpressionAttributeValues'] as const;
const ANSWER_ITEMS = ['Item', 'Attributes'] as const;

/** The SDK client's resolved settings these calls use. */
interface ClientParts {
  credentials: SignatureV4['credentialProvider'];
  sha256: ConstructorParameters<typeof SignatureV4>[0]['sha256'];
  requestHandler: { handle(request: HttpRequest): Promise<{ response: HttpResponse }> };
  protocol: { deserializeResponse(schema: unknown, context: unknown, response: HttpResponse): Promise<unknown> };
  endpointProvider(params: Record<string, unknown>): { url: URL };
  streamCollector(body: unknown): Promise<Uint8Array>;
  systemClockOffset: number;
}

/**
 * The request path's single-item calls (the token gate's update, the usage row's put, and the
 * other gets, puts, updates and deletes) on the parts of the stores' SDK client: its credentials,
 * its SigV4 signer, its connections and its protocol for errors, without its middleware stack.
 *
 * Each operation's input and output are attribute values on the wire as in the SDK's types, so a
 * body is `JSON.stringify` of the input and an answer `JSON.parse`, bytes converted to and from
 * base64 (in place: the input's attribute values are the caller's, made for the call). The SDK's
 * per-call path (about fifteen middleware steps, each copying the client's settings, and a walk of
 * both messages against the operation's schema) cost more CPU than the rest of a proxied request's
 * own code (docs/decisions.md). An error answer is read by the SDK's own
 * protocol, so it is the SDK's exception (a failed condition with its item, a throttle by name), and
 * its `Date` corrects the signing clock as the SDK does.
 */
export class ItemCalls {
  private readonly parts: ClientParts;
  private readonly signer: SignatureV4;
  /** Where the calls go: the endpoint given (DynamoDB Local), or the region's, as the SDK resolves it. */
  readonly url: URL;

  constructor(
    client: DynamoDBClient,
    region: string,
    endpoint: string | undefined,
    private readonly userAgent: string,
  ) {
    this.parts = client.config;
    this.url = endpoint
      ? new URL(endpoint)
      : this.parts.endpointProvider({ Region: region, UseFIPS: false, UseDualStack: false }).url;
    this.signer = new SignatureV4({
      region,
      service: 'dynamodb',
      credentials: this.parts.credentials,
      sha256: this.parts.sha256,
      // As the SDK signs for DynamoDB: the body's hash is in the signature, not sent as a header.
      applyChecksum: false,
    });
  }

  async send(name: ItemOperation, input: object): Promise<Record<string, unknown>> {
    for (const field of REQUEST_ITEMS) convertBinaries((input as Value)[field], asText);
    const body = JSON.stringify(input);
    const { url } = this;
    const request = new HttpRequest({
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      method: 'POST',
      path: url.pathname,
      headers: {
        host: url.host,
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': `DynamoDB_20120810.${name}`,
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': this.userAgent,
      },
      body,
    });
    const signed = await this.signer.sign(request, {
      signingDate: new Date(Date.now() + this.parts.systemClockOffset),
    });
    const { response } = await this.parts.requestHandler.handle(signed as HttpRequest);
    const bytes = await this.parts.streamCollector(response.body);
    if (response.statusCode < 300) {
      const output = JSON.parse(
        Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'),
      ) as Value;
      for (const field of ANSWER_ITEMS) convertBinaries(output[field], asBytes);
      return output;
    }
    throw await this.errorOf(name, new HttpResponse({ ...response, body: bytes }));
  }

  /** The SDK's exception for an error answer, with its status, and the clock corrected if the answer's `Date` says so. */
  private async errorOf(name: ItemOperation, response: HttpResponse): Promise<unknown> {
    let error: Error & { $metadata?: { httpStatusCode?: number; clockSkewCorrected?: boolean } };
    try {
      await this.parts.protocol.deserializeResponse(schemaOf(name), this.parts, response);
      error = new Error(`DynamoDB ${name} answered ${response.statusCode}`);
    } catch (thrown) {
      error = thrown as typeof error;
    }
    // An answer that is not DynamoDB's JSON (a proxy's 502 page) still carries its status.
    error.$metadata ??= { httpStatusCode: response.statusCode };
    const serverTime = Date.parse(String(response.headers.date));
    if (
      Number.isFinite(serverTime) &&
      Math.abs(serverTime - (Date.now() + this.parts.systemClockOffset)) >= SKEW_LIMIT_MS
    ) {
      this.parts.systemClockOffset = serverTime - Date.now();
      error.$metadata.clockSkewCorrected = true;
    }
    return error;
  }
}
