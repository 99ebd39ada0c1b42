import type { ClientOptions, CodeGenClientOptions, Credentials } from './types.js';

const CREDENTIAL_KEYS = ['apiKey', 'accessToken', 'refreshToken'] as const;
const OPTION_KEYS = [
  'environment', 'baseUrl', 'baseURL', 'maxRetries', 'maxRetryWait', 'timeout', 'fetch', 'WebSocket', 'onTokens', 'onRetry', 'headers',
] as const satisfies ReadonlyArray<keyof ClientOptions>;

/** `process.env[name]` where a `process` exists (Node, Deno, Bun; not browsers), empty strings counting as unset. */
export function envVar(name: string): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return env?.[name] || undefined;
}

function checkKeys(value: unknown, allowed: readonly string[], what: string): void {
  if (value === undefined || value === null) return;
  if (typeof value !== 'object' || Array.isArray(value)) throw new TypeError(`${what} must be an object`);
  const unknown = Object.keys(value).filter((k) => !allowed.includes(k));
  if (unknown.length) {
    throw new TypeError(`Unknown ${what.replace(/s$/, '')} ${unknown.map((k) => JSON.stringify(k)).join(', ')}: expected ${allowed.join(', ')}`);
  }
}

/**
 * Sorts the constructor's arguments into credentials and options, refusing
 * anything it does not know (plain JavaScript gets no type check, so a typo
 * must not be silently ignored). Two forms:
 *   (options)               one object with credentials and options (the spec's CodeGenClient form)
 *   (credentials, options)  the original Codeloom form
 * `credentials === null` starts signed out; otherwise, with no credential
 * given, `CODELOOM_API_KEY` is used when set.
 */
export function splitArgs(first: Credentials | CodeGenClientOptions | null | undefined, second: ClientOptions | undefined, twoArgs: boolean): { credentials: Credentials | undefined; options: ClientOptions } {
  let creds: Record<string, unknown> | null | undefined;
  let options: Record<string, unknown>;
  if (twoArgs) {
    checkKeys(first, CREDENTIAL_KEYS, 'credentials');
    checkKeys(second, OPTION_KEYS, 'options');
    creds = first as Record<string, unknown> | null | undefined;
    options = { ...(second as Record<string, unknown> | undefined) };
  } else {
    checkKeys(first, [...CREDENTIAL_KEYS, ...OPTION_KEYS], 'options');
    const all = { ...(first as Record<string, unknown> | null | undefined) };
    creds = first === null ? null : {};
    options = {};
    for (const [k, v] of Object.entries(all)) {
      if ((CREDENTIAL_KEYS as readonly string[]).includes(k)) { if (creds) creds[k] = v; } else options[k] = v;
    }
    if (creds && creds.apiKey === null) creds = null; // { apiKey: null }: signed out on purpose
  }
  if (options.baseUrl !== undefined && options.baseURL !== undefined && options.baseUrl !== options.baseURL) {
    throw new TypeError('Give baseUrl or baseURL, not both');
  }
  for (const k of ['baseUrl', 'baseURL'] as const) {
    if (options[k] !== undefined && (typeof options[k] !== 'string' || !/^https?:\/\//i.test(options[k] as string))) {
      throw new TypeError(`${k} must be an http(s) URL, not ${JSON.stringify(options[k])}`);
    }
  }
  return { credentials: toCredentials(creds), options: options as ClientOptions };
}

function toCredentials(creds: Record<string, unknown> | null | undefined): Credentials | undefined {
  if (creds === null) return undefined;
  const { apiKey, accessToken, refreshToken } = creds ?? {};
  if (apiKey !== undefined && accessToken !== undefined) throw new TypeError('Give apiKey or accessToken, not both');
  if (apiKey !== undefined) {
    if (typeof apiKey !== 'string' || !apiKey) throw new TypeError('apiKey must be a non-empty string');
    return { apiKey };
  }
  if (accessToken !== undefined) {
    if (typeof accessToken !== 'string' || !accessToken) throw new TypeError('accessToken must be a non-empty string');
    if (refreshToken !== undefined && typeof refreshToken !== 'string') throw new TypeError('refreshToken must be a string');
    return { accessToken, refreshToken: refreshToken as string | undefined };
  }
  if (refreshToken !== undefined) throw new TypeError('refreshToken needs an accessToken');
  const fromEnv = envVar('CODELOOM_API_KEY');
  return fromEnv ? { apiKey: fromEnv } : undefined;
}
