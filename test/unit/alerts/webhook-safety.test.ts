import type { LookupAddress } from 'node:dns';
import { isPublicAddress } from '../../../lambda/alerts/address-rules';
import { postSigned, publicOnlyLookup, webhookUrlProblem } from '../../../lambda/alerts/webhook-delivery';

const strict = { allowPrivate: false };

test.each([
  '127.0.0.1',
  '10.1.2.3',
  '172.20.0.1',
  '192.168.1.1',
  '169.254.169.254',
  '100.64.0.1',
  '0.0.0.0',
  '224.0.0.1',
  '::1',
  '::',
  'fe80::1',
  'fd00::1',
  '::ffff:127.0.0.1',
  '::ffff:a9fe:a9fe',
  '[::1]',
  '::ffff:8.8.8.8',
  'not-an-address',
])('%s is not a public address', (address) => {
  expect(isPublicAddress(address)).toBe(false);
});

test.each(['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111'])('%s is a public address', (address) => {
  expect(isPublicAddress(address)).toBe(true);
});

test.each([
  ['http://hooks.example.com/x', 'https://'],
  ['ftp://hooks.example.com/x', 'https://'],
  ['https://user:pw@hooks.example.com/x', 'user name'],
  ['https://localhost/x', 'public address'],
  ['https://127.0.0.1/x', 'public address'],
  ['https://[::1]/x', 'public address'],
  ['https://169.254.169.254/latest/meta-data', 'public address'],
  ['hooks.example.com', 'absolute'],
])('the webhook URL %s is refused', (url, reason) => {
  expect(webhookUrlProblem(url, strict)).toContain(reason);
});

test('an https URL of a public host is accepted; ALERT_WEBHOOK_ALLOW_PRIVATE accepts http and loopback', () => {
  expect(webhookUrlProblem('https://hooks.example.com/services/T0/B0/x', strict)).toBeUndefined();
  expect(webhookUrlProblem('http://127.0.0.1:9000/hook', { allowPrivate: true })).toBeUndefined();
});

test('a name that resolves to a loopback address is refused at the lookup the connection uses', async () => {
  const lookup = publicOnlyLookup(false);
  const outcome = await new Promise<{ error: Error | null; address: string | LookupAddress[] }>((done) =>
    lookup('localhost', { all: false }, (error, address) => done({ error, address })),
  );
  expect(outcome.error?.message).toContain('no public address');
});

test('a delivery to a private address fails without retry and without connecting', async () => {
  await expect(postSigned('https://10.0.0.1/hook', '{}', 'secret', strict)).rejects.toMatchObject({
    retryable: false,
  });
});
