/**
 * The fake Bedrock's signature check is itself proven: what the AWS SDK signs is accepted (through the
 * real Bedrock Runtime client, and the SDK's signer called directly), and each way a request can differ
 * from what was signed is refused — the body, the signature, the secret key, the scope, the date.
 */
import { BedrockRuntimeClient, ConverseCommand } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { SignatureV4 } from '@smithy/signature-v4';
import { createHash } from 'node:crypto';
import { NodeSha256 } from '../../lambda/upstream/aws-signing';
import { startFakeBedrock, type FakeBedrock } from './fake-bedrock';
import { sigV4Problem, type SigningSecrets } from './sigv4-verifier';

const secrets: SigningSecrets = {
  accessKeyId: 'test-access-key-id-verifier',
  secretAccessKey: 'test-secret-access-key-verifier',
  sessionToken: 'test-session-token-verifier',
  region: 'eu-west-1',
  service: 'bedrock',
};
const BODY = Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'Hello' }] }] }));
// An ARN as a model id: its colons and slash are encoded in the path, and encoded once more when signed.
const RAW_PATH = `/model/${encodeURIComponent('arn:aws:bedrock:eu-west-1:123456789012:inference-profile/eu.anthropic.claude-sonnet-4-6')}/converse`;

interface Signed {
  headers: Record<string, string>;
  at: number;
}

/** Signs the request with the AWS SDK's own signer (as the SDK configures it for Bedrock). */
async function sign(
  options: {
    applyChecksum?: boolean;
    body?: Buffer;
    secret?: string;
    region?: string;
    service?: string;
    at?: Date;
    extraHeaders?: Record<string, string>;
  } = {},
): Promise<Signed> {
  const at = options.at ?? new Date();
  const signer = new SignatureV4({
    region: options.region ?? secrets.region,
    service: options.service ?? secrets.service,
    sha256: NodeSha256,
    credentials: {
      accessKeyId: secrets.accessKeyId,
      secretAccessKey: options.secret ?? secrets.secretAccessKey,
      sessionToken: secrets.sessionToken,
    },
    uriEscapePath: true,
    applyChecksum: options.applyChecksum ?? true,
  });
  const request = await signer.sign(
    {
      method: 'POST',
      protocol: 'https:',
      hostname: 'bedrock-runtime.eu-west-1.amazonaws.com',
      path: RAW_PATH,
      query: {},
      headers: {
        host: 'bedrock-runtime.eu-west-1.amazonaws.com',
        'content-type': 'application/json',
        ...options.extraHeaders,
      },
      body: options.body ?? BODY,
    },
    { signingDate: at },
  );
  return { headers: request.headers, at: at.getTime() };
}

const check = (signed: Signed, body = BODY, headers = signed.headers, now = signed.at) =>
  sigV4Problem('POST', RAW_PATH, headers, body, secrets, now);

describe('the SigV4 verifier', () => {
  it("accepts a request signed by the AWS SDK's signer", async () => {
    expect(check(await sign())).toBeUndefined();
  });

  it('refuses a body other than the one signed, whether or not the signer sent its hash', async () => {
    const changed = Buffer.from(BODY.toString().replace('Hello', 'Hellp'));
    const withHash = await sign();
    expect(withHash.headers['x-amz-content-sha256']).toBe(createHash('sha256').update(BODY).digest('hex'));
    expect(check(withHash, changed)).toBe('x-amz-content-sha256 is not the hash of the body received');
    const withoutHash = await sign({ applyChecksum: false });
    expect(withoutHash.headers['x-amz-content-sha256']).toBeUndefined();
    expect(check(withoutHash)).toBeUndefined();
    expect(check(withoutHash, changed)).toBe('the signature does not match');
  });

  it('hashes the body itself: a claimed x-amz-content-sha256 of the signed body does not cover another body', async () => {
    const claimed = createHash('sha256').update(BODY).digest('hex');
    const signed = await sign({ extraHeaders: { 'x-amz-content-sha256': claimed } });
    expect(check(signed)).toBeUndefined();
    expect(check(signed, Buffer.from('{"messages":[]}'))).toBe(
      'x-amz-content-sha256 is not the hash of the body received',
    );
  });

  it('refuses a changed signature', async () => {
    const signed = await sign();
    const authorization = signed.headers.authorization!.replace(
      /Signature=([0-9a-f])/,
      (_, c: string) => `Signature=${c === '0' ? '1' : '0'}`,
    );
    expect(authorization).not.toBe(signed.headers.authorization);
    expect(check(signed, BODY, { ...signed.headers, authorization })).toBe('the signature does not match');
  });

  it('refuses a signature made with another secret key', async () => {
    expect(check(await sign({ secret: 'd3Jvbmctc2VjcmV0LWtleS1mb3ItdGhlLXZlcmlmaWVy' }))).toBe(
      'the signature does not match',
    );
  });

  it.each([
    ['region', { region: 'us-east-1' }, 'scope us-east-1/bedrock, expected eu-west-1/bedrock'],
    ['service', { service: 's3' }, 'scope eu-west-1/s3, expected eu-west-1/bedrock'],
  ])('refuses a signature for another %s', async (_, scope, problem) => {
    expect(check(await sign(scope))).toBe(problem);
  });

  it('refuses a signature from more than five minutes ago, or ahead', async () => {
    const signed = await sign({ at: new Date(Date.now() - 6 * 60_000) });
    expect(check(signed, BODY, signed.headers, Date.now())).toBe('signed more than five minutes away from now');
    expect(check(signed, BODY, signed.headers, signed.at - 6 * 60_000)).toBe(
      'signed more than five minutes away from now',
    );
  });
});

describe('the fake Bedrock runtime', () => {
  let fake: FakeBedrock;
  beforeAll(async () => {
    fake = await startFakeBedrock({ region: 'eu-west-1' });
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  const client = (secretAccessKey: string) =>
    new BedrockRuntimeClient({
      region: fake.secrets.region,
      endpoint: fake.url,
      credentials: { accessKeyId: fake.secrets.accessKeyId, secretAccessKey, sessionToken: fake.secrets.sessionToken },
      requestHandler: new NodeHttpHandler(),
      maxAttempts: 1,
    });
  const converse = (secretAccessKey: string) =>
    client(secretAccessKey).send(
      new ConverseCommand({
        modelId: 'arn:aws:bedrock:eu-west-1:123456789012:inference-profile/eu.anthropic.claude-sonnet-4-6',
        messages: [{ role: 'user', content: [{ text: 'Hello' }] }],
      }),
    );

  it("answers the AWS SDK's own signed request, an ARN model id included", async () => {
    const answer = await converse(fake.secrets.secretAccessKey);
    expect(answer.usage?.outputTokens).toBeGreaterThan(0);
    expect(fake.requests).toMatchObject([
      {
        auth: 'sigv4',
        signatureProblem: undefined,
        operation: 'converse',
        model: 'arn:aws:bedrock:eu-west-1:123456789012:inference-profile/eu.anthropic.claude-sonnet-4-6',
      },
    ]);
  });

  it('refuses a request signed with another secret as AWS does (403 InvalidSignatureException)', async () => {
    await expect(converse('d3Jvbmctc2VjcmV0LWtleS1mb3ItdGhlLXZlcmlmaWVy')).rejects.toMatchObject({
      name: 'InvalidSignatureException',
      $metadata: { httpStatusCode: 403 },
    });
    expect(fake.requests).toMatchObject([{ signatureProblem: 'the signature does not match' }]);
  });

  it('refuses a signed request whose body was changed on the way', async () => {
    const tamper = client(fake.secrets.secretAccessKey);
    // After signing, the body is swapped for another of the same length.
    tamper.middlewareStack.add(
      (next) => (args) => {
        // The SDK's JSON body is bytes (read through their buffer, not its string methods).
        const request = args.request as { body: Uint8Array };
        const sent = Buffer.from(request.body.buffer, request.body.byteOffset, request.body.byteLength).toString(
          'utf8',
        );
        request.body = Buffer.from(sent.replace('Hello', 'Hellp'));
        return next(args);
      },
      { step: 'deserialize', name: 'tamperAfterSigning', priority: 'low' },
    );
    await expect(
      tamper.send(
        new ConverseCommand({
          modelId: 'eu.anthropic.claude-sonnet-4-6',
          messages: [{ role: 'user', content: [{ text: 'Hello' }] }],
        }),
      ),
    ).rejects.toMatchObject({
      name: 'InvalidSignatureException',
    });
    expect(fake.requests[0]!.body.toString()).toContain('Hellp');
    expect(fake.requests[0]!.signatureProblem).toBe('x-amz-content-sha256 is not the hash of the body received');
  });
});
