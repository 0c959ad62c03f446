/** Runs `count` tasks with at most `concurrency` in flight; results keep the tasks' order. */
export async function runPool<T>(count: number, concurrency: number, task: (index: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      results[index] = await task(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return results;
}

/** Waits so that the next few seconds stay inside one fixed one-minute window of the wall clock. */
export async function awayFromMinuteEdge(neededMs: number): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute + neededMs < 60_000) return;
  await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 250));
}
