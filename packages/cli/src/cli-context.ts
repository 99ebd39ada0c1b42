import { Codeloom, CodeloomError, type Credentials } from '@codeloom/client';
import WebSocket from 'ws';
import { loadCredentials, saveCredentials, type StoredCredentials } from './credentials-store.js';
import { retryNotice } from './retry-notice.js';

export interface GlobalFlags {
  json: boolean;
  sandbox: boolean;
  baseUrl?: string | undefined;
}

export class UsageError extends Error {}

/** --base-url, else CODELOOM_BASE_URL, else the server of the last login, else the local default. */
export function resolveBaseUrl(flags: GlobalFlags, stored?: StoredCredentials): string {
  return flags.baseUrl ?? process.env.CODELOOM_BASE_URL ?? stored?.baseUrl ?? 'http://127.0.0.1:8080';
}

/**
 * A client for the stored credentials (or `credentials`, e.g. a key being
 * checked before it is saved); rotated session tokens are written back as they
 * change; retries are announced on stderr.
 */
export function clientFor(flags: GlobalFlags, { anonymous = false, credentials }: { anonymous?: boolean; credentials?: Credentials } = {}): Codeloom {
  const stored = loadCredentials();
  const baseUrl = resolveBaseUrl(flags, stored);
  const options = {
    baseUrl,
    environment: flags.sandbox ? ('sandbox' as const) : ('production' as const),
    WebSocket: WebSocket as never,
    onRetry: retryNotice,
    onTokens: (tokens: { accessToken: string; refreshToken: string | undefined }) => {
      const current = loadCredentials();
      if (current) saveCredentials({ ...current, accessToken: tokens.accessToken, ...(tokens.refreshToken ? { refreshToken: tokens.refreshToken } : {}) });
    },
  };
  if (anonymous) return new Codeloom(null, options);
  if (credentials) return new Codeloom(credentials, options);
  const apiKey = process.env.CODELOOM_API_KEY || stored?.apiKey;
  if (apiKey) return new Codeloom({ apiKey }, options);
  if (stored?.accessToken && stored.refreshToken) return new Codeloom({ accessToken: stored.accessToken, refreshToken: stored.refreshToken }, options);
  throw new CodeloomError({ status: 401, code: 'unauthorized', detail: 'Not signed in: run `codeloom login` (or set CODELOOM_API_KEY).' });
}

export function print(flags: GlobalFlags, data: unknown, text: string): void {
  process.stdout.write(flags.json ? `${JSON.stringify(data)}\n` : text.endsWith('\n') ? text : `${text}\n`);
}

/** `key=value` pairs (repeatable flags) into an object; numbers and booleans keep their type. */
export function parsePairs(pairs: string[] | undefined, flag: string): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const pair of pairs ?? []) {
    const eq = pair.indexOf('=');
    if (eq < 1) throw new UsageError(`--${flag} takes key=value (got ${JSON.stringify(pair)})`);
    const key = pair.slice(0, eq);
    const raw = pair.slice(eq + 1);
    out[key] = raw === 'true' ? true : raw === 'false' ? false : raw !== '' && /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
  }
  return out;
}
