/**
 * Runs `work` on every item, starting them in order and keeping at most `inFlight` running at once;
 * settles when all are done (or as soon as one rejects, the others still running to their end).
 * Batch writes and reads use it to stay far below one partition's limits.
 */
export async function eachInFlight<T>(
  items: readonly T[],
  inFlight: number,
  work: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, items.length) }, worker));
}
