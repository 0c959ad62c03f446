/**
 * The match rules of the built-in price data (@pydantic/genai-prices): how a
 * model id a provider reports is tied to one priced model. Comparisons ignore
 * case, as the data's own matcher does.
 */
export type MatchRule =
  | { equals: string }
  | { starts_with: string }
  | { ends_with: string }
  | { contains: string }
  | { regex: string }
  | { and: MatchRule[] }
  | { or: MatchRule[] };

export function matches(rule: MatchRule, id: string): boolean {
  if ('or' in rule) return rule.or.some((inner) => matches(inner, id));
  if ('and' in rule) return rule.and.every((inner) => matches(inner, id));
  const lower = id.toLowerCase();
  if ('equals' in rule) return lower === rule.equals.toLowerCase();
  if ('starts_with' in rule) return lower.startsWith(rule.starts_with.toLowerCase());
  if ('ends_with' in rule) return lower.endsWith(rule.ends_with.toLowerCase());
  if ('contains' in rule) return lower.includes(rule.contains.toLowerCase());
  if ('regex' in rule) return regexOf(rule.regex).test(id);
  return false;
}

const regexes = new Map<string, RegExp>();
function regexOf(source: string): RegExp {
  let regex = regexes.get(source);
  if (!regex) regexes.set(source, (regex = new RegExp(source)));
  return regex;
}

const COMPACT_DATE = /(-)(20\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?=-|:|$)/g;

/**
 * `claude-x-20250514` → `claude-x-2025-05-14`: the second spelling a dated id
 * is tried under when the first finds no price (providers write dates both ways).
 */
export function withDashedDate(id: string): string {
  return id.replace(COMPACT_DATE, (whole, dash: string, year: string, month: string, day: string) => {
    const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
    return date.getUTCMonth() === Number(month) - 1 && date.getUTCDate() === Number(day)
      ? `${dash}${year}-${month}-${day}`
      : whole;
  });
}
