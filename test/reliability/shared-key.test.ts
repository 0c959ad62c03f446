/**
 * Two local instances on one DynamoDB share the key material that seals provider keys: an
 * instance whose DATA_DIR holds another master key refuses to start, in one line saying what to
 * do, instead of answering 500 on every stored-key request later. With the key file copied
 * over (docs/operations.md, "Two local instances on one store"), it starts and opens the keys the first one saved.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAllFakes, type AllFakes } from '../fakes/start-fakes';
import { credentialHeaders, ENDPOINT, requestBody } from './support/requests';
import { spawnServer, type ServerProcess } from './support/server-process';

let fakes: AllFakes;
const started: ServerProcess[] = [];
beforeAll(async () => {
  fakes = await startAllFakes();
});
afterAll(async () => {
  for (const server of started) server.cleanUp();
  await fakes?.close();
});

test("a second instance with its own master key refuses to start; with the first one's key file it serves the stored keys", async () => {
  const tablePrefix = `km${randomBytes(4).toString('hex')}-`;
  const first = await spawnServer({ ...fakes.env }, { tablePrefix });
  started.push(first);
  const created = await fetch(`${first.url}/api/admin/accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${first.adminKey}` },
    body: '{}',
  });
  const { token } = (await created.json()) as { token: string };
  const providerKey = `sk-stored-${randomBytes(8).toString('hex')}`;
  const saved = await fetch(`${first.url}/api/keys/prov-b`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ key: providerKey }),
  });
  expect(saved.status).toBe(200);

  const secondDir = mkdtempSync(join(tmpdir(), 'second-instance-'));
  try {
    const refused = await spawnServer({ ...fakes.env }, { tablePrefix, dataDir: secondDir }).then(
      () => undefined,
      (error: Error) => error.message,
    );
    expect(refused).toBeDefined();
    const printed = refused!.split('\n').slice(1).filter(Boolean);
    expect(printed).toHaveLength(1);
    expect(printed[0]).toMatch(
      /sealed with local master key local:[0-9a-f]{12}.*copy local-master\.key from the first instance's DATA_DIR/,
    );

    copyFileSync(join(first.dataDir, 'local-master.key'), join(secondDir, 'local-master.key'));
    const second = await spawnServer({ ...fakes.env }, { tablePrefix, dataDir: secondDir });
    started.push(second);
    const answer = await fetch(second.url + '/api/proxy' + ENDPOINT['prov-b'], {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...credentialHeaders('prov-b', token) },
      body: JSON.stringify(requestBody('prov-b', 'through the second instance')),
    });
    expect(answer.status).toBe(200);
    expect(fakes.fakes['prov-b'].requests.at(-1)?.headers.authorization).toBe(`Bearer ${providerKey}`);
  } finally {
    rmSync(secondDir, { recursive: true, force: true });
  }
});
