import { queryWithoutSecrets } from '../../../lambda/upstream/query';

const token = 'sk-proxy-acct.tok.s3cr3tPart0123456789';
const secret = 's3cr3tPart0123456789';

describe('queryWithoutSecrets', () => {
  test.each([
    ['a parameter quoting the token', `key=${token}&alt=sse`, 'alt=sse'],
    ['the secret part alone', `alt=sse&k=${secret}`, 'alt=sse'],
    ['the token percent-encoded', `key=${encodeURIComponent(token).replace(/-/g, '%2D')}&alt=sse`, 'alt=sse'],
    ['a malformed escape beside an encoded token', `key=%ZZ${token.replace('s', '%73')}&x=1`, 'x=1'],
    ['a parameter name quoting it', `${token}=1&y=2`, 'y=2'],
  ])('drops %s', (_, query, kept) => {
    expect(queryWithoutSecrets(query, [token, secret])).toBe(kept);
  });

  test('keeps every other parameter byte for byte, in order', () => {
    const query = 'alt=sse&a=%2F%20b&empty=&flag&a=2';
    expect(queryWithoutSecrets(query, [token, secret])).toBe(query);
  });

  test('no secrets or no query: unchanged', () => {
    expect(queryWithoutSecrets('', [token])).toBe('');
    expect(queryWithoutSecrets(`key=${token}`, [undefined, ''])).toBe(`key=${token}`);
  });
});
