import { writeFileSync } from 'node:fs';
import { startAllFakes } from '../fakes/start-fakes';
import { startProxy } from '../support/proxy-server';
import { callProxy } from './support/requests';
import { runPool } from './support/pool';

jest.setTimeout(300_000);
test('scratch', async () => {
  const fakes = await startAllFakes({ behaviour: { usage: 'random' }, seed: 1 });
  const proxy = await startProxy({ fakes, env: { RATE_LIMIT_PER_MINUTE: '10000000', NODE_OPTIONS: '--require /tmp/patch.cjs' } });
  const t0 = Date.now();
  const r = await runPool(400, 64, (i) => callProxy(proxy, { provider: (['prov-a','prov-b','prov-c','prov-d','prov-e'] as const)[i % 5], stream: i % 2 === 0, token: proxy.account.token, prompt: `p-${i}` }));
  console.log(`${Date.now() - t0} ms, statuses`, r.map((x) => x.status).filter((s) => s !== 200).length);
  writeFileSync('/tmp/scratch-out.log', proxy.output());
  await proxy.stop();
  await fakes.close();
});
