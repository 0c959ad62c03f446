import type { FallbackDefault } from './types';

/** A token's default fallbacks as typed: `prov-b/gpt-4o: gpt-4o-mini, prov-d/mistral-small-latest; …`. */
export function formatDefaults(list: readonly FallbackDefault[] | undefined): string {
  return (list ?? []).map((entry) => `${entry.provider}/${entry.model}: ${entry.fallbacks.join(', ')}`).join('; ');
}

/** The typed text as the API takes it, or what is wrong with it; the server checks the models themselves. */
export function parseDefaults(text: string): FallbackDefault[] | string {
  const parts = text
    .split(/[;\n]/)
    .map((part) => part.trim())
    .filter((part) => part !== '');
  const list: FallbackDefault[] = [];
  for (const part of parts) {
    const colon = part.indexOf(':');
    const key = part.slice(0, Math.max(colon, 0)).trim();
    const slash = key.indexOf('/');
    if (colon < 0 || slash <= 0 || slash === key.length - 1)
      return `Write each as provider/model: fallback, fallback (e.g. prov-b/gpt-4o: gpt-4o-mini), not "${part}".`;
    const fallbacks = part
      .slice(colon + 1)
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== '');
    list.push({ provider: key.slice(0, slash), model: key.slice(slash + 1), fallbacks });
  }
  return list;
}
