/**
 * Which numbers a text quotes that a results.json does not hold: every number in the text must
 * equal, at the precision it is printed with, a number somewhere in the results (a measured or
 * derived figure, or a number inside one of its strings, such as a budget's target).
 */

const NUMBER = /\d[\d,]*(?:\.\d+)?/g;

/** Every number in a JSON value: numeric leaves, and the numbers written in strings and keys. */
function numbersIn(value: unknown, into: number[] = []): number[] {
  if (typeof value === 'number' && Number.isFinite(value)) into.push(value);
  else if (typeof value === 'string') for (const match of value.match(NUMBER) ?? []) into.push(Number(match.replace(/,/g, '')));
  else if (Array.isArray(value)) for (const item of value) numbersIn(item, into);
  else if (value && typeof value === 'object')
    for (const [key, item] of Object.entries(value)) {
      numbersIn(key, into);
      numbersIn(item, into);
    }
  return into;
}

/** The text without what is not a figure: HTML comments, link targets and the commit it names. */
function figuresOf(text: string, commit: string): string[] {
  const plain = text
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/\]\([^)]*\)/g, ']')
    .replace(new RegExp(`\\b${commit.slice(0, 7)}[0-9a-f]*\\b`, 'g'), ' ');
  return plain.match(NUMBER) ?? [];
}

export function figuresNotHeld(text: string, results: { source: { commit: string } }): string[] {
  const held = new Set<string>();
  for (const value of numbersIn(results)) for (let digits = 0; digits <= 3; digits++) held.add(Math.abs(value).toFixed(digits));
  return figuresOf(text, results.source.commit).filter((quoted) => !held.has(quoted.replace(/,/g, '')));
}
