/**
 * An account's failover settings (docs/fallbacks.md, "Defaults"): default fallbacks per model, so an
 * application gets them without a code change, and the first-token and stall limits its requests
 * get unless they set their own. A token's own defaults ride on its gate item (auth/ports.ts).
 */
import type { FallbackDefaults } from '../auth/ports';
import { limitInRange, savedFallbacksProblem } from '../upstream/fallbacks';

export { limitInRange };

export type { FallbackDefaults };

export interface AccountFailover {
  /** Keyed `<provider>/<model>` (`defaultsKey`). */
  fallbacks: FallbackDefaults;
  firstTokenMs?: number;
  stallMs?: number;
}

export const NO_FAILOVER_SETTINGS: AccountFailover = { fallbacks: {} };

/** Models an account may give defaults: the list is read, whole, by the requests of an instance that has none cached. */
export const MAX_ACCOUNT_DEFAULTS = 100;
/** Fewer for a token: its defaults are on its gate item, which every one of its requests reads and writes. */
export const MAX_TOKEN_DEFAULTS = 5;
export const MAX_MODEL_CHARS = 200;

/** The key of a model's defaults: the provider the body's model is asked of, then the model. */
export const defaultsKey = (provider: string, model: string) => `${provider}/${model}`;

/** A key's provider and model (a provider id holds no slash; a model may). */
export function splitDefaultsKey(key: string): { provider: string; model: string } {
  const slash = key.indexOf('/');
  return { provider: key.slice(0, slash), model: key.slice(slash + 1) };
}

/** One model's defaults as the management API shows them. */
export type FallbackDefaultJson = {
  provider: string;
  model: string;
  fallbacks: string[];
};

/** The defaults as a list, sorted by provider then model. */
export function defaultsJson(map: FallbackDefaults | undefined): FallbackDefaultJson[] {
  return Object.keys(map ?? {})
    .sort()
    .map((key) => ({ ...splitDefaultsKey(key), fallbacks: map![key] }));
}

/** Why defaults saved for a model of `provider` could never be used, or undefined (upstream/fallbacks.ts holds the rules). */
export function defaultsProblem(provider: string, entries: readonly string[]): string | undefined {
  return savedFallbacksProblem(provider, entries);
}
