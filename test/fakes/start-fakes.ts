/**
 * Starts one fake upstream per provider and gives the environment that points the proxy at them.
 *
 *   const upstreams = await startAllFakes();
 *   const proxy = await startProxy({ ...upstreams.env });
 *   upstreams.fakes['prov-b'].next({ status: 429, headers: { 'retry-after': '3' } });
 *   await upstreams.close();
 */
import type { ProviderFolder } from '../fixtures/index';
import type { FakeUpstreamOptions, UsageTotals } from './behaviour';
import { emptyTotals } from './behaviour';
import { startFakeBedrock, type FakeBedrock } from './fake-bedrock';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream';
import type { FakeStyle } from './styles';

export type ProviderId = ProviderFolder;

export const PROVIDER_STYLES: Record<ProviderId, FakeStyle> = {
  'prov-a': 'anthropic',
  'prov-b': 'openai',
  'prov-c': 'gemini',
  'prov-d': 'mistral',
  'prov-e': 'groq',
};

export type UpstreamEnv = Record<`UPSTREAM_BASE_URL_PROV_${'A' | 'B' | 'C' | 'D' | 'E'}`, string>;

export interface AllFakes {
  /**
   * `UPSTREAM_BASE_URL_PROV_A` … `_E`: prov-a's is the host root, the others end in the provider's real base path;
   * and the fake Bedrock's URL, region and the AWS credentials it verifies signatures against.
   */
  env: UpstreamEnv & Record<string, string>;
  fakes: Record<ProviderId, FakeUpstream>;
  bedrock: FakeBedrock;
  /** Usage reported by all fakes together. */
  sentUsage(): UsageTotals;
  reset(): void;
  close(): Promise<void>;
}

const envName = (id: ProviderId) => `UPSTREAM_BASE_URL_${id.toUpperCase().replace('-', '_')}` as keyof UpstreamEnv;

/** `options` apply to every fake; `perProvider` adds to them for one provider. */
export async function startAllFakes(
  options: Omit<FakeUpstreamOptions, 'style'> = {},
  perProvider: Partial<Record<ProviderId, Omit<FakeUpstreamOptions, 'style'>>> = {},
): Promise<AllFakes> {
  const ids = Object.keys(PROVIDER_STYLES) as ProviderId[];
  const started = await Promise.all(
    ids.map((id, index) =>
      startFakeUpstream({
        ...options,
        // Distinct seeds, so random usage differs between providers but stays reproducible.
        ...(options.seed !== undefined ? { seed: options.seed + index } : {}),
        ...perProvider[id],
        style: PROVIDER_STYLES[id],
      }),
    ),
  );
  const fakes = Object.fromEntries(ids.map((id, index) => [id, started[index]!])) as Record<ProviderId, FakeUpstream>;
  const bedrock = await startFakeBedrock();
  const env = { ...(Object.fromEntries(ids.map((id) => [envName(id), fakes[id].url])) as UpstreamEnv), ...bedrock.env };

  return {
    env,
    fakes,
    bedrock,
    sentUsage() {
      const total = emptyTotals();
      for (const fake of started) {
        const sent = fake.sentUsage;
        total.responses += sent.responses;
        total.inputTokens += sent.inputTokens;
        total.outputTokens += sent.outputTokens;
        total.cacheReadTokens += sent.cacheReadTokens;
        total.cacheWriteTokens += sent.cacheWriteTokens;
      }
      return total;
    },
    reset() {
      for (const fake of started) fake.reset();
      bedrock.reset();
    },
    async close() {
      await Promise.all([...started.map((fake) => fake.close()), bedrock.close()]);
    },
  };
}
