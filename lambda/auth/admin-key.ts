/**
 * The admin API's bearer key: given directly (`ADMIN_KEY`, local), or read once from a secret
 * store (Secrets Manager in AWS, see deps.ts) and kept for the life of the instance.
 */
export function adminKeySource(source: {
  key?: string;
  readSecret?: () => Promise<string | undefined>;
}): () => Promise<string | undefined> {
  const { key, readSecret } = source;
  if (key) return () => Promise.resolve(key);
  if (!readSecret) return () => Promise.resolve(undefined);
  let loading: Promise<string | undefined> | undefined;
  return () => {
    loading ??= readSecret().catch((error) => {
      loading = undefined; // try again on the next request instead of caching a failure
      throw error;
    });
    return loading;
  };
}
