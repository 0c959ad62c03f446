import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface AsyncState<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/**
 * Runs `load` whenever `deps` change (or on `reload`) and keeps the last good data while reloading,
 * so a refresh does not blank the page. Answers to superseded calls are dropped.
 */
export function useAsync<T>(load: () => Promise<T>, deps: readonly unknown[]): AsyncState<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(true);
  const [generation, setGeneration] = useState(0);
  const latest = useRef(0);

  useEffect(() => {
    const call = ++latest.current;
    setLoading(true);
    setError(undefined);
    load().then(
      (value) => {
        if (call !== latest.current) return;
        setData(value);
        setLoading(false);
      },
      (reason: unknown) => {
        if (call !== latest.current) return;
        setError(reason);
        setLoading(false);
      },
    );
    // `load` is recreated on every render; `deps` says when it really changed.
  }, [...deps, generation]);

  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { data, error, loading, reload };
}
