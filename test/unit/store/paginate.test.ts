import { allItems, pages, type PageKey } from '../../../lambda/store/dynamodb/paginate';

/** A partition of `total` items served `size` at a time, the way Query answers: a LastEvaluatedKey while more remain. */
function partition(total: number, size: number) {
  const starts: (PageKey | undefined)[] = [];
  const read = async (start: PageKey | undefined) => {
    starts.push(start);
    const from = start ? Number(start.n) + 1 : 0;
    const items = Array.from({ length: Math.max(0, Math.min(size, total - from)) }, (_, i) => ({ n: from + i }));
    const last = items.at(-1);
    return { Items: items, LastEvaluatedKey: last && last.n < total - 1 ? { n: last.n } : undefined };
  };
  return { read, starts };
}

describe('the one Query pagination loop', () => {
  it('reads every page in order, each from the key the previous one ended at', async () => {
    const { read, starts } = partition(7, 3);
    expect((await allItems(read)).map((item) => item.n)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(starts).toEqual([undefined, { n: 2 }, { n: 5 }]);
  });

  it('an empty answer is one call and no items', async () => {
    const { read, starts } = partition(0, 3);
    expect(await allItems(read)).toEqual([]);
    expect(starts).toHaveLength(1);
  });

  it('starts where it is told and reads no further once the caller stops', async () => {
    const { read, starts } = partition(10, 2);
    const seen: number[] = [];
    for await (const page of pages(read, { n: 3 })) {
      seen.push(...page.items.map((item) => item.n));
      if (seen.length >= 4) break;
    }
    expect(seen).toEqual([4, 5, 6, 7]);
    expect(starts).toEqual([{ n: 3 }, { n: 5 }]);
  });
});
