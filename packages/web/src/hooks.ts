import { useCallback, useEffect, useState } from 'preact/hooks';
import { getState, messageOf, subscribe } from './session.js';

export function useSession() {
  const [s, set] = useState(getState());
  useEffect(() => subscribe(() => set(getState())), []);
  return s;
}

/** Loads data (again when deps change); `reload()` fetches afresh. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setError(null);
    load().then((d) => { if (live) setData(d); }, (e) => { if (live) setError(messageOf(e)); });
    return () => { live = false; };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, reload, setData };
}

export const formatDate = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short' }) : '—');
