import { Codeloom, CodeloomError } from '@codeloom/client';

/**
 * The signed-in state of the page. The session itself is an HttpOnly cookie
 * the script cannot read; what the page holds is a short-lived access token,
 * in memory only, fetched from /dashboard/session/token (with the CSRF
 * header) at load and again shortly before it expires.
 */
export type Environment = 'production' | 'sandbox';
export interface SessionUser { id: string; email: string; name: string; plan: string }
export interface RateUse { limit: number; remaining: number; reset: number }

interface State { user: SessionUser | null; token: string | null; expiresAt: number; environment: Environment }

const SESSION = '/dashboard/session';
let state: State = { user: null, token: null, expiresAt: 0, environment: 'production' };
let rate: RateUse | null = null;
/** The X-RateLimit-* figures of the latest API answer (kept apart from State so API calls do not re-render the whole page). */
export const lastRateUse = () => rate;
const listeners = new Set<() => void>();
let csrf: string | null = null;
let refreshTimer: ReturnType<typeof setTimeout> | undefined;
let clients = new Map<string, Codeloom>();

export const getState = () => state;
export function subscribe(fn: () => void) {
  listeners.add(fn);
  return () => { listeners.delete(fn); };
}
function update(patch: Partial<State>) {
  state = { ...state, ...patch };
  for (const fn of listeners) fn();
}

async function csrfToken(): Promise<string> {
  if (csrf) return csrf;
  const res = await fetch(`${SESSION}/csrf`, { credentials: 'same-origin', cache: 'no-store' });
  const body = (await res.json()) as { csrf_token: string };
  csrf = body.csrf_token;
  return csrf;
}

/** A problem document's message, for showing to people. */
export class SessionError extends Error {
  constructor(message: string, readonly status: number, readonly code: string, readonly errors: { path: string; message: string }[] = []) { super(message); }
}

async function post(path: string, body?: unknown): Promise<Response> {
  const send = async () => fetch(`${SESSION}/${path}`, {
    method: 'POST', credentials: 'same-origin', cache: 'no-store',
    headers: { 'x-csrf-token': await csrfToken(), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  let res = await send();
  if (res.status === 403) { csrf = null; res = await send(); } // the CSRF cookie expired: fetch a new one once
  return res;
}

async function problem(res: Response): Promise<SessionError> {
  const doc = (await res.json().catch(() => ({}))) as { detail?: string; code?: string; errors?: { path: string; message: string }[] };
  const fields = doc.errors?.map((e) => `${e.path.replace(/^\//, '') || 'input'} ${e.message}`).join('; ');
  return new SessionError(fields ? `${doc.detail ?? 'Invalid input'}: ${fields}` : doc.detail ?? `Request failed (${res.status})`, res.status, doc.code ?? 'error', doc.errors ?? []);
}

function accept(body: { access_token: string; expires_in: number; user: SessionUser }) {
  clients = new Map();
  update({ user: body.user, token: body.access_token, expiresAt: Date.now() + body.expires_in * 1000 });
  clearTimeout(refreshTimer);
  // Renew at three quarters of the lifetime.
  refreshTimer = setTimeout(() => { void restore(); }, Math.max(5_000, body.expires_in * 750));
}

/** Picks up an existing sign-in (the cookie); false when there is none. */
export async function restore(): Promise<boolean> {
  const res = await post('token');
  if (res.ok) { accept(await res.json()); return true; }
  if (res.status === 401) { clearLocal(); return false; }
  throw await problem(res);
}

export async function signIn(email: string, password: string) {
  const res = await post('sign-in', { email, password });
  if (!res.ok) throw await problem(res);
  csrf = null; // the server may rotate it; fetch afresh
  accept(await res.json());
}

export async function signUp(name: string, email: string, password: string) {
  const res = await post('sign-up', { name, email, password });
  if (!res.ok) throw await problem(res);
  accept(await res.json());
}

export async function signOut() {
  const res = await post('sign-out');
  if (!res.ok) throw await problem(res);
  clearLocal();
}

function clearLocal() {
  clearTimeout(refreshTimer);
  clients = new Map();
  update({ user: null, token: null, expiresAt: 0 });
}

// Back from the background with a token about to expire: renew before the next click needs it.
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && state.token && state.expiresAt - Date.now() < 60_000) void restore().catch(() => {});
});

export function setEnvironment(environment: Environment) {
  update({ environment });
}

/**
 * Before a call that cannot be repeated cheaply (opening the streaming channel): a token that has run out by
 * this page's clock — its renewal timer slept with the laptop, or the tab was throttled — is renewed first.
 */
export async function ensureFreshToken(): Promise<void> {
  if (state.token && state.expiresAt - Date.now() < 5_000) await restore();
}

/** Whether an answer is 401 `token_expired` (read from a copy, so the caller still has the body). */
async function isTokenExpired(res: Response): Promise<boolean> {
  if (res.status !== 401) return false;
  const doc = (await res.clone().json().catch(() => ({}))) as { code?: string };
  return doc.code === 'token_expired';
}

/** Keeps the X-RateLimit-* headers of the latest API answer, for the Account page. */
const recordingFetch: typeof fetch = async (input, init) => {
  let res = await fetch(input, init);
  // The access token ran out (a sleeping laptop, a throttled timer): get a fresh one from the cookie session and
  // repeat once. Only on token_expired: a wrong password (invalid_credentials) or a revoked session is the answer.
  const headers = new Headers(init?.headers);
  if (headers.has('authorization') && state.token && (await isTokenExpired(res)) && (await restore().catch(() => false)) && state.token) {
    headers.set('authorization', `Bearer ${state.token}`);
    res = await fetch(input, { ...init, headers });
  }
  const limit = res.headers.get('x-ratelimit-limit');
  if (limit !== null) {
    rate = { limit: Number(limit), remaining: Number(res.headers.get('x-ratelimit-remaining')), reset: Number(res.headers.get('x-ratelimit-reset')) };
  }
  return res;
};

/** The SDK, signed in with the current access token, in the chosen (or given) environment. */
export function api(environment: Environment = state.environment): Codeloom {
  if (!state.token) throw new SessionError('Not signed in.', 401, 'unauthorized');
  const key = environment;
  let client = clients.get(key);
  if (!client) {
    client = new Codeloom({ accessToken: state.token }, { baseUrl: location.origin, environment, fetch: recordingFetch, maxRetries: 1 });
    clients.set(key, client);
  }
  return client;
}

/** The bearer header of raw calls to routes the SDK has no resource for (OAuth app registration). */
export async function rawApi<T>(method: string, path: string, body?: unknown): Promise<T> {
  if (!state.token) throw new SessionError('Not signed in.', 401, 'unauthorized');
  const res = await recordingFetch(`/api/v1${path}`, {
    method, headers: { authorization: `Bearer ${state.token}`, 'x-environment': state.environment, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw await problem(res);
  if (res.status === 204) return undefined as T; // DELETE: no content
  return (await res.json()) as T;
}

/** What the signed-out pages offer (GET /dashboard/session/config). */
export interface PublicConfig { signup: string; first_account: boolean; password_reset_by_mail: boolean }

/** The server's sign-up mode and mail; on failure, everything is offered (the server still decides each request). */
export async function publicConfig(): Promise<PublicConfig> {
  const res = await fetch(`${SESSION}/config`, { credentials: 'same-origin', cache: 'no-store' }).catch(() => undefined);
  if (!res?.ok) return { signup: 'open', first_account: false, password_reset_by_mail: true };
  return (await res.json()) as PublicConfig;
}

/** The unauthenticated password-reset calls (POST, JSON); the answer's body, or the problem as a SessionError. */
async function publicPost<T>(path: string, body: unknown): Promise<T> {
  const res = await fetch(`/api/v1${path}`, { method: 'POST', cache: 'no-store', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw await problem(res);
  return (await res.json()) as T;
}

/** Sends a reset link to `email` when it has an account; the answer's words are the same either way. */
export const requestPasswordReset = (email: string) => publicPost<{ accepted: true; detail: string }>('/auth/password-reset', { email });

/** Sets a new password with the token of an emailed link; every session of the account ends (this page's too). */
export const confirmPasswordReset = (token: string, newPassword: string) => publicPost<{ success: true }>('/auth/password-reset/confirm', { token, new_password: newPassword });

/** Changes the signed-in person's password; their other sessions end, this one stays. */
export const changePassword = (currentPassword: string, newPassword: string) =>
  rawApi<{ success: true }>('POST', '/auth/password', { current_password: currentPassword, new_password: newPassword });

/** A message for people from any error the SDK or a session call throws. */
export function messageOf(error: unknown): string {
  if (CodeloomError.isInstance(error)) return error.detail;
  if (error instanceof Error) return error.message;
  return String(error);
}
