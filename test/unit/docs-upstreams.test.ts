/**
 * docs/api.md ("Custom upstreams") and docs/operations.md ("Configuration") name every provider's
 * upstream variable, Bedrock's region variable included, and each example line of api.md resolves as
 * written; the start banner shows Bedrock's override with its path template as written.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../lambda/config';
import { bannerLines } from '../../lambda/local/banner';
import { PROVIDER_CATALOG } from '../../lambda/providers/catalog';
import { providerById, upstreamUrl, type ProviderId } from '../../lambda/providers/registry';

const doc = (name: string) => readFileSync(join(__dirname, '../../docs', name), 'utf8');
const section = (text: string, heading: string) => {
  const from = text.indexOf(`\n## ${heading}\n`);
  expect(from).toBeGreaterThan(-1);
  const end = text.indexOf('\n## ', from + 1);
  return text.slice(from, end < 0 ? undefined : end);
};
const api = section(doc('api.md'), 'Custom upstreams');
const operations = section(doc('operations.md'), 'Configuration');

/** The variables a page names, the `UPSTREAM_BASE_URL_PROV_A` … `_E` range spelled out. */
function named(text: string): Set<string> {
  const names = new Set(text.match(/\b[A-Z][A-Z0-9_]{3,}\b/g));
  const range = /`UPSTREAM_BASE_URL_PROV_([A-Z])` … `_([A-Z])`/.exec(text);
  if (range) for (let c = range[1]!.charCodeAt(0); c <= range[2]!.charCodeAt(0); c++) names.add(`UPSTREAM_BASE_URL_PROV_${String.fromCharCode(c)}`);
  return names;
}

it.each([
  ['api.md', api],
  ['operations.md', operations],
])("%s names every provider's upstream override and region variable, and no other", (_, text) => {
  const expected = PROVIDER_CATALOG.flatMap((entry): string[] => ('aws' in entry.upstream ? [entry.upstream.aws.regionEnvVar, entry.upstream.envVar] : [entry.upstream.envVar]));
  const upstreamNames = [...named(text)].filter((name) => name.startsWith('UPSTREAM_BASE_URL_') || name.endsWith('_REGION'));
  expect(upstreamNames.filter((name) => name !== 'AWS_REGION').sort()).toEqual([...new Set(expected)].sort());
});

it("each of api.md's example overrides resolves to the endpoint it shows", () => {
  const lines = [...api.matchAll(/^(UPSTREAM_BASE_URL_\w+)=(\S+)\s+# → (\S+)/gm)];
  expect(lines.map((line) => line[1])).toEqual(['UPSTREAM_BASE_URL_PROV_A', 'UPSTREAM_BASE_URL_PROV_B', 'UPSTREAM_BASE_URL_BEDROCK']);
  for (const [, name, value, shown] of lines) {
    const entry = PROVIDER_CATALOG.find((e) => e.upstream.envVar === name)!;
    const provider = providerById(entry.id as ProviderId)!;
    const resolved = decodeURI(upstreamUrl(provider, loadConfig({ [name!]: value }).upstreams[provider.id].baseUrl).href);
    expect(resolved.replace('{model}', '{modelId}')).toBe(shown);
  }
});

it('the banner shows the Bedrock override with its path template as written', () => {
  const lines = bannerLines({
    base: 'http://127.0.0.1:8787',
    config: loadConfig({ UPSTREAM_BASE_URL_BEDROCK: 'http://127.0.0.1:9006' }),
    ownStore: true,
    admin: { key: 'k', generated: false },
    firstAccount: { accountId: 'acct', reason: 'shown-before' },
  });
  expect(lines).toContain('  upstream bedrock:  http://127.0.0.1:9006/model/{model}/converse   (UPSTREAM_BASE_URL_BEDROCK)');
});
