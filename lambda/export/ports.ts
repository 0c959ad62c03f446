/** Where exported objects go: the stack's export bucket in AWS (s3-object-store.ts). */
export interface ObjectStore {
  /** Writes the whole object under its key, replacing one of the same key. Throws when it could not. */
  put(key: string, body: Uint8Array): Promise<void>;
}
