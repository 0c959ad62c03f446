import { startProxy } from '../support/proxy-server';
import { credentialHeaders } from '../reliability/support/requests';
jest.setTimeout(120000);
test('probe', async () => {
  const proxy = await startProxy();
  const big = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(7 * 1024 * 1024) }] });
  for (let i = 0; i < 3; i++) {
    const r = await fetch(proxy.proxyBase + '/prov-b/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json', ...credentialHeaders('prov-b', proxy.account.token) }, body: big });
    console.log('413?', r.status, r.headers.get('connection'), (await r.text()).slice(0, 60));
    const t0 = Date.now();
    const ctl = new AbortController(); const timer = setTimeout(() => ctl.abort(), 8000);
    try {
      const h = await fetch(proxy.url + '/api/health', { signal: ctl.signal });
      console.log('next', h.status, Date.now() - t0);
    } catch (e) { console.log('next failed', (e as Error).message, Date.now() - t0); }
    clearTimeout(timer);
  }
  await proxy.stop();
});
