import type { AuthResponse } from '@codeloom/protocol';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Store } from '../../storage/store.js';
import type { RevocationStore } from '../../limits/revocation-store.js';
import type { Account } from '../../storage/repos/accounts-repo.js';
import { findLiveSessionByRefreshHash } from '../../storage/repos/dashboard-sessions-repo.js';
import { readCookies } from '../oauth/browser-session.js';
import type { KeyRing } from '../auth/key-ring.js';
import { mintRefreshToken, sha256 } from '../../identity/secrets.js';
import { sessionScope } from '../../identity/scopes.js';

/** How long a dashboard sign-in lasts (the cookie and the server-side session alike). */
export const DASHBOARD_SESSION_TTL_SEC = 12 * 60 * 60;
const VALUE = /^[A-Za-z0-9_-]{20,200}$/;

const isSecure = (request: FastifyRequest) => request.protocol === 'https';
/** Over https the __Host- prefix pins the cookie to this host (Secure, Path=/, no Domain). */
const cookieName = (request: FastifyRequest) => `${isSecure(request) ? '__Host-' : ''}codeloom_dashboard`;

function setCookie(request: FastifyRequest, reply: FastifyReply, value: string, maxAge: number) {
  const attributes = [`${cookieName(request)}=${value}`, 'Path=/', `Max-Age=${maxAge}`, 'HttpOnly', 'SameSite=Lax'];
  if (isSecure(request)) attributes.push('Secure');
  const previous = reply.getHeader('set-cookie');
  const list = previous === undefined ? [] : Array.isArray(previous) ? previous.map(String) : [String(previous)];
  reply.header('set-cookie', [...list, attributes.join('; ')]);
}

/**
 * The dashboard's sign-in: an ordinary Codeloom session (the sessions table,
 * so logout and revocation work as for any session) whose refresh token
 * lives only in an HttpOnly cookie. The page trades the cookie (plus the
 * CSRF header) for a short-lived access token that it keeps in memory and
 * sends as a Bearer token; the cookie itself is never accepted by /api/v1.
 * The token is not rotated on use, so two tabs never trip reuse detection;
 * the session simply ends after DASHBOARD_SESSION_TTL_SEC or at sign-out.
 */
export class DashboardSessions {
  constructor(
    private readonly store: Store,
    private readonly revocations: RevocationStore,
    private readonly keyRing: KeyRing,
    private readonly accessTokenTtl: number,
  ) {}

  /** Always a new session (and cookie value) at sign-in, so a value planted before it is useless. Returns the session id. */
  async start(request: FastifyRequest, reply: FastifyReply, userId: string): Promise<string> {
    const refresh = mintRefreshToken();
    const session = await this.store.sessions.create({
      userId, environment: 'production', refreshHash: refresh.hash,
      refreshExpiresAt: new Date(Date.now() + DASHBOARD_SESSION_TTL_SEC * 1000).toISOString(),
    });
    setCookie(request, reply, refresh.token, DASHBOARD_SESSION_TTL_SEC);
    return session.id;
  }

  /** The live session behind the cookie: not expired, not revoked, its refresh token never spent. */
  async current(request: FastifyRequest): Promise<{ sessionId: string; userId: string } | undefined> {
    const value = readCookies(request)[cookieName(request)];
    if (!value || !VALUE.test(value)) return undefined;
    const session = await findLiveSessionByRefreshHash(this.store.handle.db, sha256(value));
    if (!session || (await this.revocations.isRevoked(session.sessionId))) return undefined;
    return session;
  }

  /**
   * The account a dashboard sign-up just created. register() also opened an
   * API session whose tokens nobody will see: it is closed, the dashboard opens its own.
   */
  async adoptRegistration(created: AuthResponse): Promise<Account | undefined> {
    await this.store.sessions.revoke((await this.keyRing.verify(created.token)).sid, 'superseded');
    return this.store.accounts.findById(created.user.id);
  }

  /** A fresh access token (JWT) for the signed-in person, or undefined. */
  async accessToken(request: FastifyRequest) {
    const session = await this.current(request);
    if (!session) return undefined;
    const account = await this.store.accounts.findById(session.userId);
    return account ? this.issue(account, session.sessionId) : undefined;
  }

  async issue(account: Account, sessionId: string) {
    const ttl = this.accessTokenTtl;
    const token = await this.keyRing.sign({ sub: account.user.id, sid: sessionId, scope: sessionScope(account.org.plan), env: 'production' }, ttl);
    return { access_token: token, expires_in: ttl, user: { id: account.user.id, email: account.user.email, name: account.user.name, plan: account.org.plan } };
  }

  /** Revokes the session everywhere (its access tokens stop working at once) and clears the cookie. */
  async end(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const session = await this.current(request);
    if (session) {
      await this.store.sessions.revoke(session.sessionId, 'logout');
      await this.revocations.revoke(session.sessionId, this.accessTokenTtl);
    }
    setCookie(request, reply, '', 0);
  }
}
