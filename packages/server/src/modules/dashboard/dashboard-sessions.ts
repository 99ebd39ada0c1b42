import { PLANS } from '@codeloom/protocol';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import type { Account } from '../../storage/repos/accounts-repo.js';
import { findLiveSessionByRefreshHash } from '../../storage/repos/dashboard-sessions-repo.js';
import { readCookies } from '../oauth/browser-session.js';
import { mintRefreshToken, sha256 } from '../auth/secrets.js';

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
  constructor(private readonly ctx: AppContext) {}

  /** Always a new session (and cookie value) at sign-in, so a value planted before it is useless. Returns the session id. */
  async start(request: FastifyRequest, reply: FastifyReply, userId: string): Promise<string> {
    const refresh = mintRefreshToken();
    const session = await this.ctx.store.sessions.create({
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
    const session = await findLiveSessionByRefreshHash(this.ctx.store.handle.db, sha256(value));
    if (!session || (await this.ctx.revocations.isRevoked(session.sessionId))) return undefined;
    return session;
  }

  /** A fresh access token (JWT) for the signed-in person, or undefined. */
  async accessToken(request: FastifyRequest) {
    const session = await this.current(request);
    if (!session) return undefined;
    const account = await this.ctx.store.accounts.findById(session.userId);
    return account ? this.issue(account, session.sessionId) : undefined;
  }

  async issue(account: Account, sessionId: string) {
    const ttl = this.ctx.config.accessTokenTtl;
    const token = await this.ctx.keyRing.sign({ sub: account.user.id, sid: sessionId, scope: PLANS[account.org.plan].permissions.join(' '), env: 'production' }, ttl);
    return { access_token: token, expires_in: ttl, user: { id: account.user.id, email: account.user.email, name: account.user.name, plan: account.org.plan } };
  }

  /** Revokes the session everywhere (its access tokens stop working at once) and clears the cookie. */
  async end(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const session = await this.current(request);
    if (session) {
      await this.ctx.store.sessions.revoke(session.sessionId, 'logout');
      await this.ctx.revocations.revoke(session.sessionId, this.ctx.config.accessTokenTtl);
    }
    setCookie(request, reply, '', 0);
  }
}
