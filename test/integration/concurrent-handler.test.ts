/**
 * The handler serving many requests at once in one process, as the local server runs it and as an
 * execution environment of managed instances does (docs/deploy.md, "Managed instances"): requests
 * of several accounts, JSON and streamed, each with its own prompt, requester label and stored
 * key, sent together. Each reaches the provider with its own account's key and its own prompt,
 * each answer carries its own request id, and each row lands in its own account with its own label.
 */
import { callProxy, type CallResult } from '../reliability/support/requests';
import { fakeProviderKey, startProxy, type Account, type ProxyServer } from '../support/proxy-server';

const ACCOUNTS = 4;
const PER_ACCOUNT = 8;

let proxy: ProxyServer;
const accounts: { account: Account; key: string }[] = [];

beforeAll(async () => {
  proxy = await startProxy();
  for (let i = 0; i < ACCOUNTS; i++) {
    const account = await proxy.createAccount(`concurrent-${i}`);
    accounts.push({ account, key: await proxy.saveKey(account.token, 'prov-b', fakeProviderKey('prov-b')) });
  }
});
afterAll(async () => {
  await proxy?.stop();
});

const promptOf = (a: number, r: number) => `account ${a}, request ${r}: say hello.`;

it('keeps every request its own: key, prompt, answer and row', async () => {
  const before = proxy.fakes.fakes['prov-b'].requests.length;
  const sent: { a: number; r: number; answer: Promise<CallResult> }[] = [];
  for (let r = 0; r < PER_ACCOUNT; r++)
    for (let a = 0; a < ACCOUNTS; a++)
      sent.push({
        a,
        r,
        answer: callProxy(proxy, {
          provider: 'prov-b',
          token: accounts[a]!.account.token,
          prompt: promptOf(a, r),
          stream: r % 2 === 1,
          headers: { 'x-proxy-user': `user-${a}-${r}` },
        }),
      });
  const answers = await Promise.all(sent.map(async (s) => ({ ...s, result: await s.answer })));

  for (const { result } of answers) expect(result.status).toBe(200);
  expect(new Set(answers.map(({ result }) => result.requestId)).size).toBe(answers.length);

  // Upstream: each prompt arrived once, with the key of the account that sent it.
  const upstream = proxy.fakes.fakes['prov-b'].requests.slice(before);
  expect(upstream).toHaveLength(answers.length);
  for (const { a, r } of answers) {
    const matching = upstream.filter((call) => call.body.includes(promptOf(a, r)));
    expect(matching).toHaveLength(1);
    expect(matching[0]!.headers.authorization).toBe(`Bearer ${accounts[a]!.key}`);
  }

  // Rows: each account sees exactly its own requests, each with its own label.
  for (let a = 0; a < ACCOUNTS; a++) {
    const own = answers.filter((answer) => answer.a === a);
    const rows = await proxy.rowsFor(
      accounts[a]!.account.token,
      own.map(({ result }) => result.requestId),
    );
    expect(rows).toHaveLength(PER_ACCOUNT);
    for (const { r, result } of own) {
      const row = rows.find((candidate) => candidate.id === result.requestId);
      expect(row).toMatchObject({ requester: `user-${a}-${r}`, stream: r % 2 === 1, status_code: 200 });
    }
  }
});
