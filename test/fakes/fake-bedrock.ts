/**
 * A fake Amazon Bedrock Runtime on 127.0.0.1, speaking its wire format: Converse and InvokeModel as
 * JSON, ConverseStream and InvokeModelWithResponseStream as AWS event streams (binary frames made by
 * the maintained codec, each written in two pieces so readers meet frames split across chunks).
 * Bodies follow the shapes of AWS's API reference and the AWS SDK's own test fixtures: Converse `usage`
 * with prompt-cache counts, the stream's `metadata` event, Anthropic's messages body and its stream
 * events inside `chunk` events (base64 `bytes`), `amazon-bedrock-invocationMetrics` on the last chunk,
 * the `X-Amzn-Bedrock-*-Token-Count` headers, and errors as `{"message"}` with `x-amzn-ErrorType`.
 *
 * It checks every request's credential: a SigV4 signature must verify against the configured
 * credentials (`sigv4-verifier.ts`); a Bearer token is a Bedrock API key, recorded as sent.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  DEFAULT_BEDROCK_USAGE,
  exceptionFrame,
  isAnthropic,
  jsonBody,
  streamFrames,
  tokenHeaders,
  type BedrockUsage,
} from './bedrock-answers';
import { sigV4Problem, type SigningSecrets } from './sigv4-verifier';

export { BEDROCK_TEXT, DEFAULT_BEDROCK_USAGE, type BedrockUsage } from './bedrock-answers';

export interface BedrockBehaviour {
  status?: number;
  /** The AWS error type (`ThrottlingException`, …) of an error answer. */
  errorType?: string;
  errorMessage?: string;
  usage?: Partial<BedrockUsage>;
  /** After a stream's last frame, keep the connection open without ending the body, until the client leaves. */
  holdOpen?: boolean;
  /** A stream that ends with this exception after its first events; with `thenEnd`, the stream's remaining frames follow it. */
  streamException?: { type: string; message: string; thenEnd?: boolean };
  /** A stream whose connection is destroyed after this many frames, where the next would come. */
  cutAfterFrames?: number;
  /** ConverseStream answers with a tool call (a `toolUse` block) instead of text. */
  toolUse?: boolean;
}

export interface BedrockRequest {
  method: string;
  /** The path as it arrived (the model id still encoded). */
  rawPath: string;
  /** The query string as it arrived, without `?` (empty when none). */
  rawQuery: string;
  /** The model id, decoded. */
  model: string;
  operation: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  json: unknown;
  auth: 'sigv4' | 'bearer' | 'none';
  bearer?: string;
  /** Why the signature was refused (absent: valid, or not signed). */
  signatureProblem?: string;
  /** The exact bytes of the answer. */
  response: { status: number; headers: Record<string, string>; body: Buffer };
}

export interface FakeBedrock {
  /** The base URL for `UPSTREAM_BASE_URL_BEDROCK`. */
  url: string;
  /** The AWS credentials and scope its signatures must verify against (give the proxy the same credentials). */
  secrets: SigningSecrets;
  /** The environment a proxy needs to reach it and sign for it. */
  env: Record<string, string>;
  requests: BedrockRequest[];
  next(behaviour: BedrockBehaviour): void;
  always(behaviour: BedrockBehaviour | undefined): void;
  reset(): void;
  close(): Promise<void>;
}

const ROUTE = /^\/model\/([^/]+)\/(converse|converse-stream|invoke|invoke-with-response-stream)$/;
/** Two operations the proxy forwards as `other`: CountTokens, and starting or listing asynchronous invocations. */
const OTHER_ROUTE = /^\/(?:model\/([^/]+)\/(count-tokens)|(async-invoke))$/;

export async function startFakeBedrock(options: { region?: string } = {}): Promise<FakeBedrock> {
  const secrets: SigningSecrets = {
    accessKeyId: `test-access-key-id-${randomBytes(6).toString('hex')}`,
    secretAccessKey: `test-secret-access-key-${randomBytes(12).toString('hex')}`,
    sessionToken: `test-session-token-${randomBytes(12).toString('hex')}`,
    region: options.region ?? 'us-east-1',
    service: 'bedrock',
  };
  const requests: BedrockRequest[] = [];
  const queued: BedrockBehaviour[] = [];
  let standing: BedrockBehaviour | undefined;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const rawUrl = req.url ?? '/';
      const rawPath = rawUrl.split('?')[0]!;
      const route = ROUTE.exec(rawPath);
      const otherRoute = OTHER_ROUTE.exec(rawPath);
      const behaviour = { ...standing, ...queued.shift() };
      const authorization = String(req.headers.authorization ?? '');
      const auth = authorization.startsWith('AWS4-HMAC-SHA256 ')
        ? 'sigv4'
        : authorization.startsWith('Bearer ')
          ? 'bearer'
          : 'none';
      const signatureProblem =
        auth === 'sigv4' ? sigV4Problem(req.method ?? 'POST', rawUrl, req.headers, body, secrets) : undefined;
      let json: unknown;
      try {
        json = JSON.parse(body.toString('utf8'));
      } catch {
        json = undefined;
      }
      const recorded: BedrockRequest = {
        method: req.method ?? '',
        rawPath,
        rawQuery: rawUrl.includes('?') ? rawUrl.slice(rawUrl.indexOf('?') + 1) : '',
        model: route ? decodeURIComponent(route[1]!) : otherRoute?.[1] ? decodeURIComponent(otherRoute[1]) : '',
        operation: route?.[2] ?? otherRoute?.[2] ?? otherRoute?.[3] ?? '',
        headers: req.headers,
        body,
        json,
        auth,
        bearer: auth === 'bearer' ? authorization.slice(7) : undefined,
        signatureProblem,
        response: { status: 0, headers: {}, body: Buffer.alloc(0) },
      };
      requests.push(recorded);
      const send = (
        status: number,
        headers: Record<string, string>,
        parts: Buffer[],
        holdOpen = false,
        cut = false,
      ) => {
        const all = { 'x-amzn-requestid': randomBytes(16).toString('hex'), ...headers };
        recorded.response = { status, headers: all, body: Buffer.concat(parts) };
        writeParts(res, status, all, parts, holdOpen, cut);
      };
      const fail = (status: number, type: string, message: string) =>
        send(
          status,
          {
            'content-type': 'application/json',
            'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
          },
          [Buffer.from(JSON.stringify({ message }))],
        );

      if (auth === 'none')
        return fail(403, 'AccessDeniedException', 'Authorization header requires a Bearer token or a SigV4 signature.');
      if (signatureProblem)
        return fail(
          403,
          'InvalidSignatureException',
          `The request signature we calculated does not match the signature you provided (${signatureProblem}).`,
        );
      if (otherRoute)
        return send(200, { 'content-type': 'application/json' }, [
          Buffer.from(JSON.stringify(otherAnswer(req.method ?? '', recorded.operation, secrets.region))),
        ]);
      if (!route || req.method !== 'POST') return fail(404, 'UnknownOperationException', `No operation at ${rawPath}`);
      if (behaviour.status && behaviour.status >= 400)
        return fail(
          behaviour.status,
          behaviour.errorType ?? 'ValidationException',
          behaviour.errorMessage ?? 'The provided model identifier is invalid.',
        );

      const usage = { ...DEFAULT_BEDROCK_USAGE, ...behaviour.usage };
      const operation = route[2]!;
      const model = recorded.model;
      if (operation === 'converse' || operation === 'invoke') {
        const headers = {
          'content-type': 'application/json',
          ...(operation === 'invoke' ? tokenHeaders(usage, isAnthropic(model)) : {}),
        };
        return send(200, headers, [Buffer.from(JSON.stringify(jsonBody(operation, model, usage)))]);
      }
      let frames = streamFrames(operation, model, usage, behaviour.toolUse);
      if (behaviour.cutAfterFrames !== undefined) frames = frames.slice(0, behaviour.cutAfterFrames);
      if (behaviour.streamException)
        frames = [
          ...frames.slice(0, 2),
          exceptionFrame(behaviour.streamException.type, behaviour.streamException.message),
          ...(behaviour.streamException.thenEnd ? frames.slice(2) : []),
        ];
      // Each frame in two writes, cut inside its prelude or body.
      const parts = frames.flatMap((frame, i) => {
        const cut = 1 + ((i * 7) % (frame.length - 1));
        return [frame.subarray(0, cut), frame.subarray(cut)];
      });
      return send(
        200,
        { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-bedrock-content-type': 'application/json' },
        parts,
        behaviour.holdOpen,
        behaviour.cutAfterFrames !== undefined,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    secrets,
    env: {
      UPSTREAM_BASE_URL_BEDROCK: url,
      BEDROCK_REGION: secrets.region,
      AWS_ACCESS_KEY_ID: secrets.accessKeyId,
      AWS_SECRET_ACCESS_KEY: secrets.secretAccessKey,
      AWS_SESSION_TOKEN: secrets.sessionToken!,
    },
    requests,
    next: (behaviour) => void queued.push(behaviour),
    always: (behaviour) => void (standing = behaviour),
    reset() {
      requests.length = 0;
      queued.length = 0;
      standing = undefined;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** CountTokens' count, a started asynchronous invocation's ARN, or the (empty) list of them. */
function otherAnswer(method: string, operation: string, region: string): unknown {
  if (operation === 'count-tokens') return { inputTokens: DEFAULT_BEDROCK_USAGE.input };
  if (method === 'GET') return { asyncInvokeSummaries: [] };
  return { invocationArn: `arn:aws:bedrock:${region}:123456789012:async-invoke/${randomBytes(6).toString('hex')}` };
}

/**
 * Writes the parts one by one, each after the previous has been flushed, so they leave as separate
 * chunks; `holdOpen` never ends the body, `cut` destroys the connection instead of ending it.
 */
function writeParts(
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  parts: Buffer[],
  holdOpen: boolean,
  cut: boolean,
): void {
  res.writeHead(status, headers);
  let i = 0;
  const more = () => {
    if (i >= parts.length && cut) return void res.socket?.destroy();
    if (i >= parts.length) return void (holdOpen || res.end());
    res.write(parts[i++], () => setImmediate(more));
  };
  more();
}
