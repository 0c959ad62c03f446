/**
 * The one place errors become answers scrubs the request's credentials out of the message it
 * answers with and out of the log line of a 5xx (SECURITY.md, "What is scrubbed where"); the
 * rest of the message stays as the error said it.
 */
import { FailedSignIns } from '../../../lambda/auth/failed-sign-ins';
import type { ProxyResponse } from '../../../lambda/http/response';
import { BackgroundWork } from '../../../lambda/base/background-work';
import { ProxyError } from '../../../lambda/base/errors';
import type { Logger } from '../../../lambda/base/logger';
import { answerErrors } from '../../../lambda/pipeline/answer-errors';
import type { Answering } from '../../../lambda/pipeline/state';
import { chatDialect } from '../../../lambda/providers/dialects/chat';

const TOKEN = 'sk-proxy-abcdefghijklmnop_abcdefgh_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345';
const SECRET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ012345';
const OWN_KEY = 'ck-live-0123456789abcdef0123456789';

function state(headers: Record<string, string>): Answering {
  const request = {
    id: 'req-1',
    method: 'POST',
    path: '/api/proxy/x',
    query: new URLSearchParams(),
    rawQuery: '',
    headers,
    body: Buffer.alloc(0),
    receivedAt: 0,
    startedAt: 0,
  };
  return { request, route: undefined, dialect: chatDialect, cors: {}, work: new BackgroundWork() };
}

function answer(headers: Record<string, string>, error: unknown): { message: string; logged: string[] } {
  const logged: string[] = [];
  const log: Logger = {
    info: () => undefined,
    warn: () => undefined,
    error: (message, fields) => void logged.push(JSON.stringify({ message, ...fields })),
  };
  const response = answerErrors(log, () => true, new FailedSignIns())(state(headers), error) as ProxyResponse;
  return { message: (JSON.parse(String(response.body)) as { error: { message: string } }).error.message, logged };
}

describe('answerErrors', () => {
  it.each([
    ['the proxy token (authorization)', { authorization: `Bearer ${TOKEN}` }],
    ['the proxy token (x-api-key)', { 'x-api-key': TOKEN }],
    ['the caller’s key and x-proxy-token', { authorization: `Bearer ${OWN_KEY}`, 'x-proxy-token': TOKEN }],
  ])('a 4xx message quoting %s answers with [redacted] in its place', (_, headers) => {
    const { message, logged } = answer(
      headers,
      new ProxyError(400, `bad tag "${TOKEN}", secret ${SECRET}, key ${OWN_KEY}.`),
    );
    expect(message).toBe(
      `bad tag "[redacted]", secret [redacted], key ${'x-proxy-token' in headers ? '[redacted]' : OWN_KEY}.`,
    );
    expect(logged).toEqual([]);
  });

  it('a 5xx is logged with the credential cut out of its message and its cause', () => {
    const error = new ProxyError(502, `upstream said ${OWN_KEY}`, { cause: new Error(`socket for ${TOKEN}`) });
    const { message, logged } = answer({ authorization: `Bearer ${OWN_KEY}`, 'x-proxy-token': TOKEN }, error);
    expect(message).toBe('upstream said [redacted]');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain('upstream said [redacted]');
    expect(logged[0]).toContain('socket for [redacted]');
    for (const secret of [TOKEN, SECRET, OWN_KEY]) expect(logged[0]!.includes(secret)).toBe(false);
  });

  it('an error before any request was decoded answers as before', () => {
    const logged: string[] = [];
    const log: Logger = { info: () => undefined, warn: () => undefined, error: (message) => void logged.push(message) };
    const response = answerErrors(
      log,
      () => true,
      new FailedSignIns(),
    )(undefined, new ProxyError(400, 'Bad event.')) as ProxyResponse;
    expect(JSON.parse(String(response.body))).toMatchObject({ error: { message: 'Bad event.' } });
  });
});
