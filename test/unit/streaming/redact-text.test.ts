/**
 * `redactText`, the scrub of a row's text fields, an error answer and a response header
 * (SECURITY.md, "What is scrubbed where"): every credential replaced, and the start of one
 * before a `…` that marks a quote cut short; text without one comes back as it is.
 */
import { MIN_SECRET_LENGTH, redactText, searchableSecrets } from '../../../lambda/streaming/redact';

const TOKEN = 'sk-proxy-abcdefghijklmnop_abcdefgh_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345';
const SECRET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ012345';
const KEY = 'sk-live-0123456789abcdefghij';
const secrets = searchableSecrets([SECRET, undefined, KEY, TOKEN, 'short', KEY]);

describe('redactText', () => {
  it('takes the secrets long enough to mean something, each once, longest first', () => {
    expect(secrets).toEqual([TOKEN, SECRET, KEY]);
    expect(MIN_SECRET_LENGTH).toBe(8);
  });

  it('replaces every occurrence of each, the whole token before its secret part', () => {
    expect(redactText(`a ${TOKEN} b ${SECRET} c ${KEY}${KEY} d`, secrets)).toBe(
      'a [redacted] b [redacted] c [redacted][redacted] d',
    );
  });

  it('returns text without any credential as it is, cut marks included', () => {
    const text = 'model "gpt-4o-mini-2024…" is not allowed; abcdefg… sk-proxy…';
    expect(redactText(text, secrets)).toBe(text);
    expect(redactText(`x ${TOKEN}`, [])).toBe(`x ${TOKEN}`);
  });

  it.each([43, 50, TOKEN.length - 1])(
    'replaces the secret part of a token cut after %i characters before a cut mark',
    (length) => {
      const quoted = JSON.stringify(`team${TOKEN.slice(0, length)}…`);
      expect(redactText(`x-proxy-tags: ${quoted} is not a key=value pair.`, secrets)).toBe(
        'x-proxy-tags: "teamsk-proxy-abcdefghijklmnop_abcdefgh_[redacted]…" is not a key=value pair.',
      );
    },
  );

  it('leaves a token cut within its public id (sk-proxy-<account>_<key>_), which names it but proves nothing', () => {
    const text = `send a proxy token (sk-proxy-…); got ${TOKEN.slice(0, 30)}…`;
    expect(redactText(text, secrets)).toBe(text);
  });

  it('replaces a secret part cut short, and leaves a start shorter than the shortest secret worth searching for', () => {
    expect(redactText(`v=${SECRET.slice(0, 12)}…`, secrets)).toBe('v=[redacted]…');
    expect(redactText(`v=${SECRET.slice(0, MIN_SECRET_LENGTH - 1)}…`, secrets)).toBe(
      `v=${SECRET.slice(0, MIN_SECRET_LENGTH - 1)}…`,
    );
  });

  it('handles several cut marks, whole credentials beside them', () => {
    expect(redactText(`${KEY} ${KEY.slice(0, 10)}… and ${SECRET.slice(0, 9)}… end…`, secrets)).toBe(
      '[redacted] [redacted]… and [redacted]… end…',
    );
  });

  it('handles a text of a hundred thousand cut starts (a megabyte-long model) in one pass', () => {
    const text = `${SECRET.slice(0, 9)}…`.repeat(100_000);
    const out = redactText(text, secrets);
    expect(out.length).toBe('[redacted]…'.length * 100_000);
    expect(out.includes(SECRET.slice(0, 9))).toBe(false);
  });
});
