import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Store } from '../../storage/store.js';
import type { Account } from '../../storage/repos/accounts-repo.js';
import { sha256 } from '../../identity/secrets.js';

/** How long a sign-in on the consent pages lasts. Only these pages read the cookie; API routes never do. */
export const BROWSER_SESSION_TTL_SEC = 12 * 60 * 60;
const CSRF_TTL_SEC = 2 * 60 * 60;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/**
 * Over https the cookies carry the __Host- prefix, which browsers accept
 * only with Secure, Path=/ and no Domain, so no other host (a subdomain
 * included) can plant or overwrite them.
 */
const isSecure = (request: FastifyRequest) => request.protocol === 'https';
const cookieName = (request: FastifyRequest, base: 'session' | 'csrf') => `${isSecure(request) ? '__Host-' : ''}codeloom_${base}`;

export function readCookies(request: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq < 1) continue;
    const name = part.slice(0, eq).trim();
    if (!(name in out)) out[name] = part.slice(eq + 1).trim();
  }
  return out;
}

function setCookie(request: FastifyRequest, reply: FastifyReply, base: 'session' | 'csrf', value: string, maxAge: number) {
  const attributes = [`${cookieName(request, base)}=${value}`, 'Path=/', `Max-Age=${maxAge}`, 'HttpOnly', 'SameSite=Lax'];
  if (isSecure(request)) attributes.push('Secure');
  const previous = reply.getHeader('set-cookie');
  const list = previous === undefined ? [] : Array.isArray(previous) ? previous.map(String) : [String(previous)];
  reply.header('set-cookie', [...list.filter((c) => !c.startsWith(`${cookieName(request, base)}=`)), attributes.join('; ')]);
}

const newToken = () => randomBytes(32).toString('base64url');

/**
 * CSRF protection for the sign-in and consent forms: a double-submit token.
 * The same random value sits in an HttpOnly cookie and in a hidden field; a
 * cross-site form can send the cookie but cannot read it to fill the field.
 * SameSite=Lax on both cookies is the second line.
 */
export function csrfToken(request: FastifyRequest, reply: FastifyReply): string {
  const current = readCookies(request)[cookieName(request, 'csrf')];
  if (current && TOKEN.test(current)) return current;
  const token = newToken();
  setCookie(request, reply, 'csrf', token, CSRF_TTL_SEC);
  return token;
}

/** A fresh CSRF token (after sign-in, so a value seen before it is worth nothing after). */
export function rotateCsrfToken(request: FastifyRequest, reply: FastifyReply): string {
  const token = newToken();
  setCookie(request, reply, 'csrf', token, CSRF_TTL_SEC);
  return token;
}

/**
 * Browsers also send Origin on form posts; when present it must be ours:
 * the configured public origin (the issuer, as seen through a proxy) or the
 * one this request arrived at.
 */
export function csrfMatches(request: FastifyRequest, submitted: unknown, publicOrigin: string): boolean {
  const cookie = readCookies(request)[cookieName(request, 'csrf')];
  if (!cookie || typeof submitted !== 'string' || !TOKEN.test(cookie) || !TOKEN.test(submitted)) return false;
  if (!timingSafeEqual(Buffer.from(cookie), Buffer.from(submitted))) return false;
  const origin = request.headers.origin;
  return !origin || origin === 'null' || origin === publicOrigin || origin === `${request.protocol}://${request.host}`;
}

export class BrowserSessions {
  constructor(private readonly store: Store) {}

  /** The signed-in account, or undefined (no cookie, expired, signed out, or the account is gone). */
  async current(request: FastifyRequest): Promise<Account | undefined> {
    const value = readCookies(request)[cookieName(request, 'session')];
    if (!value || !TOKEN.test(value)) return undefined;
    const userId = await this.store.webSessions.findUserId(sha256(value));
    return userId ? this.store.accounts.findById(userId) : undefined;
  }

  /** Always a new session id at sign-in, so a session id planted before sign-in is useless (no fixation). */
  async start(request: FastifyRequest, reply: FastifyReply, userId: string): Promise<void> {
    const value = newToken();
    await this.store.webSessions.create(sha256(value), userId, new Date(Date.now() + BROWSER_SESSION_TTL_SEC * 1000).toISOString());
    setCookie(request, reply, 'session', value, BROWSER_SESSION_TTL_SEC);
  }

  async end(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const value = readCookies(request)[cookieName(request, 'session')];
    if (value && TOKEN.test(value)) await this.store.webSessions.delete(sha256(value));
    setCookie(request, reply, 'session', '', 0);
  }
}
