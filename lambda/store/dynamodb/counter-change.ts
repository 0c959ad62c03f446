type Key = Record<string, string>;

/** Atomic additions to one item's counters, with attributes set beside them (the same value whoever writes them, such as an expiry). */
export interface CounterChange {
  key: Key;
  increments: Record<string, number>;
  set: Record<string, number | string>;
}

const keyId = (key: Key) =>
  Object.entries(key)
    .map(([name, value]) => `${name}=${value}`)
    .join('\u0000');

/** Changes to the same item folded into one: a transaction may name each item only once. */
export function mergeCounterChanges(changes: CounterChange[]): CounterChange[] {
  const merged = new Map<string, CounterChange>();
  for (const change of changes) {
    const id = keyId(change.key);
    const into = merged.get(id) ?? { key: change.key, increments: {}, set: {} };
    for (const [attribute, amount] of Object.entries(change.increments))
      into.increments[attribute] = (into.increments[attribute] ?? 0) + amount;
    Object.assign(into.set, change.set);
    merged.set(id, into);
  }
  return [...merged.values()];
}

/** The `Update` of one counter change: `ADD` for the counters, `SET` for the rest, with placeholder names throughout. */
export function counterUpdate(table: string, change: CounterChange) {
  const names: Record<string, string> = {};
  const values: Record<string, number | string> = {};
  const additions = Object.entries(change.increments).map(([attribute, amount], i) => {
    names[`#a${i}`] = attribute;
    values[`:a${i}`] = amount;
    return `#a${i} :a${i}`;
  });
  const assignments = Object.entries(change.set).map(([attribute, value], i) => {
    names[`#s${i}`] = attribute;
    values[`:s${i}`] = value;
    return `#s${i} = :s${i}`;
  });
  return {
    TableName: table,
    Key: change.key,
    UpdateExpression: `ADD ${additions.join(', ')}${assignments.length ? ` SET ${assignments.join(', ')}` : ''}`,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}
