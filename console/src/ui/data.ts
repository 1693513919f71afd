// Loading data in a page: a fetch on mount and on change, an interval while visible, an error in words.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api';

export interface Async<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload(): void;
  /** Replace the data locally, e.g. with a stream event. */
  setData(update: T | ((prev: T | undefined) => T | undefined)): void;
}

/** Runs `load` on mount and whenever `deps` change; the previous data stays shown while reloading. */
export function useAsync<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Async<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string>();
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const ctl = new AbortController();
    setLoading(true);
    load(ctl.signal).then(
      (d) => {
        if (ctl.signal.aborted) return;
        setData(d);
        setError(undefined);
        setLoading(false);
      },
      (err: unknown) => {
        if (ctl.signal.aborted) return;
        setError(errorText(err));
        setLoading(false);
      },
    );
    return () => ctl.abort();
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload, setData: setData as Async<T>['setData'] };
}

/** Re-runs `fn` every `ms` while mounted (and the tab is visible). */
export function useInterval(fn: () => void, ms: number): void {
  const ref = useRef(fn);
  ref.current = fn;
  useEffect(() => {
    const id = setInterval(() => {
      if (document.visibilityState === 'visible') ref.current();
    }, ms);
    return () => clearInterval(id);
  }, [ms]);
}

export const errorText = (err: unknown): string =>
  err instanceof ApiError ? err.message : err instanceof Error ? err.message : String(err);
