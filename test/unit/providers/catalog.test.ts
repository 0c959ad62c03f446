/**
 * A provider is declared once, in lambda/providers/catalog.ts (docs/providers.md): every other
 * part reads that entry. These tests show that one more entry reaches the runtime, the dashboard,
 * the management API, pricing and the banner, and that an entry taken out is gone from each of
 * them: a second list of providers would keep it.
 */
import type * as CatalogModule from '../../../lambda/providers/catalog';
import type { CatalogEntry } from '../../../lambda/providers/catalog';
import { loadConfig } from '../../../lambda/wiring/config';
import { PROVIDERS as DASHBOARD_PROVIDERS } from '../../../lambda/dashboard/src/providers';
import { bannerLines } from '../../../lambda/local/banner';
import { PROVIDER_CATALOG } from '../../../lambda/providers/catalog';
import { resolveProxyPath } from '../../../lambda/providers/registry';

test('the local banner lists an override for every catalog provider, in catalog order', () => {
  const env = Object.fromEntries(
    PROVIDER_CATALOG.map((entry, i) => [entry.upstream.envVar, `http://127.0.0.1:${9000 + i}`]),
  );
  const lines = bannerLines({
    base: 'http://127.0.0.1:8787',
    config: loadConfig(env),
    ownStore: true,
    admin: { key: 'k', generated: false },
    firstAccount: { accountId: 'acct', reason: 'shown-before' },
  });
  const overrides = lines.filter((line) => line.startsWith('  upstream '));
  expect(overrides.map((line) => /\((\w+)\)$/.exec(line)?.[1])).toEqual(
    PROVIDER_CATALOG.map((entry) => entry.upstream.envVar),
  );
  expect(overrides.map((line) => /upstream (\S+):/.exec(line)?.[1])).toEqual(PROVIDER_CATALOG.map((entry) => entry.id));
});

test('the dashboard marks exactly the providers reached through AWS as signed with the proxy’s role when no key is saved', () => {
  expect(DASHBOARD_PROVIDERS.filter((p) => p.signsWithRole).map((p) => p.id)).toEqual(
    PROVIDER_CATALOG.filter((entry) => 'aws' in entry.upstream).map((entry) => entry.id),
  );
  expect(DASHBOARD_PROVIDERS.filter((p) => p.signsWithRole).length).toBeGreaterThan(0);
});

test('the dashboard shows the catalog: names, SDK base paths, example models, colours', () => {
  expect(DASHBOARD_PROVIDERS.map((p) => [p.id, p.name, p.basePath, p.exampleModel, p.color])).toEqual(
    PROVIDER_CATALOG.map((entry) => [
      entry.id,
      entry.displayName,
      entry.sdkBasePath,
      entry.exampleModel,
      entry.chartColor,
    ]),
  );
});

/** What each dialect's official SDK appends to its `baseURL` for the main endpoint. */
const SDK = {
  messages: { mainPath: '/v1/messages' },
  chat: { mainPath: '/chat/completions' },
  'bedrock-runtime': {
    mainPath: '/model/us.anthropic.claude-sonnet-4-6/converse',
  },
} as const;

test.each(PROVIDER_CATALOG.map((entry) => [entry.id, entry] as const))(
  '%s: an SDK pointed at its sdkBasePath reaches its main endpoint',
  (id, entry) => {
    const result = resolveProxyPath(entry.sdkBasePath + SDK[entry.dialect].mainPath, 'POST');
    expect(result && 'found' in result && [result.found.provider.id, result.found.endpoint.kind]).toEqual([
      id,
      entry.endpoints[0],
    ]);
  },
);

const NEW_PROVIDER = {
  id: 'prov-z',
  displayName: 'Zeta AI',
  dialect: 'chat',
  upstream: { baseUrl: 'https://api.zeta.example/v2', envVar: 'UPSTREAM_BASE_URL_PROV_Z' },
  sdkBasePath: '/prov-z/v1',
  endpoints: ['chat', 'embeddings'],
  streamUsage: 'always',
  exampleModel: 'zeta-small',
  prices: { catalog: 'zeta', litellm: ['zeta'] },
  chartColor: '#336699',
} as const satisfies CatalogEntry;

/**
 * The catalog module as it would be with one more entry: its data, and the lookups it derives from
 * its data, over the longer list. Every other export is the module's own.
 */
function catalogWith(entry: CatalogEntry): typeof CatalogModule {
  return catalogOf((entries) => [...entries, entry]);
}

/** The catalog module over another list of entries. */
function catalogOf(change: (entries: readonly CatalogEntry[]) => CatalogEntry[]): typeof CatalogModule {
  const actual = jest.requireActual<typeof CatalogModule>('../../../lambda/providers/catalog');
  const entries = change(actual.PROVIDER_CATALOG) as unknown as typeof actual.PROVIDER_CATALOG;
  return {
    ...actual,
    PROVIDER_CATALOG: entries,
    PROVIDER_IDS: entries.map((e) => e.id),
    catalogEntry: (id: string) => entries.find((e) => e.id === id),
  };
}

test('the catalog module exports its data and the lookups derived from it (what catalogWith rebuilds), nothing else', () => {
  const actual = jest.requireActual<typeof CatalogModule>('../../../lambda/providers/catalog');
  expect(Object.keys(actual).sort()).toEqual(['DIALECT_SDK', 'PROVIDER_CATALOG', 'PROVIDER_IDS', 'catalogEntry']);
  expect(actual.PROVIDER_IDS).toEqual(actual.PROVIDER_CATALOG.map((entry) => entry.id));
  for (const entry of actual.PROVIDER_CATALOG) expect(actual.catalogEntry(entry.id)).toBe(entry);
  expect(actual.catalogEntry('prov-q')).toBeUndefined();
});

type Readers = {
  registry: typeof import('../../../lambda/providers/registry');
  dashboard: typeof import('../../../lambda/dashboard/src/providers');
  keyRoutes: typeof import('../../../lambda/api/key-routes');
  prices: typeof import('../../../lambda/pricing/load-prices');
  banner: typeof import('../../../lambda/local/banner');
  config: typeof import('../../../lambda/wiring/config');
};

/** Every reader of the catalog, imported afresh over `catalog` (a module registry of their own). */
async function readersOver(catalog: typeof CatalogModule): Promise<Readers> {
  let readers: Readers | undefined;
  await jest.isolateModulesAsync(async () => {
    jest.doMock('../../../lambda/providers/catalog', () => catalog);
    readers = {
      registry: await import('../../../lambda/providers/registry'),
      dashboard: await import('../../../lambda/dashboard/src/providers'),
      keyRoutes: await import('../../../lambda/api/key-routes'),
      prices: await import('../../../lambda/pricing/load-prices'),
      banner: await import('../../../lambda/local/banner'),
      config: await import('../../../lambda/wiring/config'),
    };
  });
  return readers!;
}

describe('an entry taken out of the catalog is gone from every reader', () => {
  const gone = 'prov-e';
  let readers: Readers;
  beforeAll(async () => {
    readers = await readersOver(catalogOf((entries) => entries.filter((entry) => entry.id !== gone)));
  });

  test('the runtime no longer routes it, the dashboard and the configuration no longer list it', () => {
    const { registry, dashboard, config } = readers;
    expect(registry.providerById(gone)).toBeUndefined();
    const resolved = registry.resolveProxyPath(`/${gone}/v1/chat/completions`, 'POST');
    expect(resolved && 'found' in resolved).toBeFalsy();
    expect(registry.endpointPaths().filter((path) => path.includes(gone))).toEqual([]);
    expect(dashboard.PROVIDERS.map((p) => p.id)).not.toContain(gone);
    expect(Object.keys(config.loadConfig({}).upstreams)).not.toContain(gone);
  });

  test('the key routes, the price files and the banner no longer name it', async () => {
    const { keyRoutes, prices, banner, config } = readers;
    const put = keyRoutes.keyRoutes.find((route) => route.method === 'PUT')!;
    await expect(put.handle({ params: { provider: gone } } as never)).rejects.toThrow(`Unknown provider "${gone}"`);
    expect(() => prices.parsePriceDocument({ providers: { [gone]: {} } })).toThrow('expected one of');
    const lines = banner.bannerLines({
      base: 'http://127.0.0.1:8787',
      config: config.loadConfig({}),
      ownStore: true,
      admin: { key: 'k', generated: false },
      firstAccount: { accountId: 'acct', reason: 'shown-before' },
    });
    expect(lines.filter((line) => line.includes(gone))).toEqual([]);
  });
});

describe('one more catalog entry is all a new provider needs', () => {
  let readers: Readers;
  beforeAll(async () => {
    readers = await readersOver(catalogWith(NEW_PROVIDER));
  });

  test('the runtime routes its paths to its base URL, with its dialect and endpoints', () => {
    const { registry, config } = readers;
    const found = registry.resolveProxyPath('/prov-z/v1/chat/completions', 'POST');
    expect(found && 'found' in found && found.found.provider.id).toBe('prov-z');
    const provider = registry.providerById('prov-z')!;
    expect(provider.dialect.name).toBe('chat');
    expect(provider.endpoints.map((e) => e.kind)).toEqual(['chat', 'embeddings']);
    expect(registry.upstreamUrl(provider, config.loadConfig({}).upstreams[provider.id].baseUrl).href).toBe(
      'https://api.zeta.example/v2/chat/completions',
    );
    expect(
      registry.upstreamUrl(
        provider,
        config.loadConfig({ UPSTREAM_BASE_URL_PROV_Z: 'http://127.0.0.1:9/v1' }).upstreams[provider.id].baseUrl,
      ).href,
    ).toBe('http://127.0.0.1:9/v1/chat/completions');
    expect(registry.endpointPaths()).toEqual(
      expect.arrayContaining(['POST /prov-z/v1/chat/completions', 'POST /prov-z/v1/embeddings']),
    );
  });

  test('the dashboard lists it with its name, SDK, base path, model and colour', () => {
    const { dashboard } = readers;
    expect(dashboard.PROVIDERS.at(-1)).toEqual({
      id: 'prov-z',
      name: 'Zeta AI',
      sdk: 'openai',
      basePath: '/prov-z/v1',
      exampleModel: 'zeta-small',
      color: '#336699',
      signsWithRole: false,
    });
    expect(dashboard.providerName('prov-z')).toBe('Zeta AI');
  });

  test('the key routes name it among the providers', async () => {
    const put = readers.keyRoutes.keyRoutes.find((route) => route.method === 'PUT')!;
    // An unknown id is refused before anything is read or written.
    const refused = put.handle({ params: { provider: 'prov-q' } } as never);
    await expect(refused).rejects.toThrow(
      `Unknown provider "prov-q". Providers: ${[...PROVIDER_CATALOG.map((e) => e.id), 'prov-z'].join(', ')}.`,
    );
  });

  test('price files may price it, in the project format and in LiteLLM’s', () => {
    const { prices } = readers;
    const own = prices.parsePriceDocument({ providers: { 'prov-z': { 'zeta-small': { input: 1, output: 2 } } } });
    expect([...own.byProvider.keys()]).toEqual(['prov-z']);
    const liteLlm = prices.fromLiteLlm({
      'zeta/zeta-small': {
        litellm_provider: 'zeta',
        mode: 'chat',
        input_cost_per_token: 1e-6,
        output_cost_per_token: 2e-6,
      },
    });
    expect([...liteLlm.byProvider.get('prov-z')!.keys()]).toEqual(['zeta-small']);
    expect(() => prices.parsePriceDocument({ providers: { 'prov-q': {} } })).toThrow(
      `expected one of ${[...PROVIDER_CATALOG.map((e) => e.id), 'prov-z'].join(', ')}`,
    );
  });

  test('the local banner shows its upstream override', () => {
    const { banner, config } = readers;
    const lines = banner.bannerLines({
      base: 'http://127.0.0.1:8787',
      config: config.loadConfig({ UPSTREAM_BASE_URL_PROV_Z: 'http://127.0.0.1:9/v1' }),
      ownStore: true,
      admin: { key: 'k', generated: false },
      firstAccount: { accountId: 'acct', reason: 'shown-before' },
    });
    expect(lines).toContain('  upstream prov-z:  http://127.0.0.1:9/v1/chat/completions   (UPSTREAM_BASE_URL_PROV_Z)');
  });
});
