import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Api } from './api';

export const ApiContext = createContext<Api | null>(null);

export function useApi(): Api {
  const api = useContext(ApiContext);
  if (!api) throw new Error('useApi() outside a signed-in session');
  return api;
}
