/** A table key as DynamoDB hands it back (`LastEvaluatedKey`) and takes it (`ExclusiveStartKey`). */
export type PageKey = Record<string, unknown>;

/** One Query (or Scan) call from a start key: what `doc.send` answers. */
export type ReadPage<T = Record<string, unknown>> = (
  startKey: PageKey | undefined,
) => Promise<{ Items?: T[]; LastEvaluatedKey?: PageKey }>;

export interface Page<T = Record<string, unknown>> {
  items: T[];
  /** Where the next page starts; undefined on the last page. */
  lastKey?: PageKey;
}

/**
 * The one pagination loop over DynamoDB's `LastEvaluatedKey`: the pages of a query in order, from
 * `startKey`, until DynamoDB says there is no more or the caller stops reading (`break`). The call
 * itself stays with the store that sends it, so what each store sends is read in its own code.
 */
export async function* pages<T>(read: ReadPage<T>, startKey?: PageKey): AsyncGenerator<Page<T>, void, undefined> {
  let start = startKey;
  do {
    const result = await read(start);
    start = result.LastEvaluatedKey;
    yield { items: result.Items ?? [], lastKey: start };
  } while (start);
}

/** Every item of every page. */
export async function allItems<T>(read: ReadPage<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const page of pages(read)) items.push(...page.items);
  return items;
}
