import type { CreateOAuthClientBody, CreatedOAuthClient, OAuthClient, UpdateOAuthClientBody } from '@codeloom/protocol';
import { AppError, notFound } from '../../errors.js';
import type { Store } from '../../storage/store.js';
import type { OAuthClientRecord } from '../../storage/repos/oauth-clients-repo.js';
import type { Principal } from '../../identity/principal.js';
import { grantableScopes } from '../../identity/scopes.js';
import { mintOAuthSecret, sha256 } from '../../identity/secrets.js';
import { paginate, type Page } from '../pagination.js';
import { NO_CREDENTIAL_EVENTS, type CredentialEvents } from '../../identity/credential-events.js';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

const toClient = (r: OAuthClientRecord): OAuthClient => ({
  id: r.id, client_id: r.id, name: r.name, type: r.type, redirect_uris: r.redirectUris, scopes: r.scopes, created_at: r.created_at,
});

/** Why a redirect URI cannot be registered, or undefined. Plain http is only for apps on the user's own machine (RFC 8252 §7.3). */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri !== uri.trim()) return 'must not start or end with white space';
  let url: URL;
  try { url = new URL(uri); } catch { return 'must be an absolute URL'; }
  if (uri.includes('#')) return 'must not contain a fragment (#…)';
  if (url.username || url.password) return 'must not contain a user name or password';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return undefined;
  return 'must use https, or http on a loopback host (127.0.0.1, [::1] or localhost)';
}

function checkedName(raw: string): string {
  const name = raw.trim();
  if (!name) throw new AppError('validation_failed', 'name must not be blank.', { errors: [{ path: '/name', message: 'must not be blank' }] });
  return name;
}

function checkRedirectUris(uris: string[]): void {
  const errors = uris.flatMap((uri, i) => {
    const problem = redirectUriProblem(uri);
    return problem ? [{ path: `/redirect_uris/${i}`, message: problem }] : [];
  });
  if (errors.length) throw new AppError('validation_failed', `A redirect URI ${errors[0]!.message}.`, { errors });
}

/** Registration of OAuth clients by signed-in users; an owner sees and deletes only their own. */
export class OAuthClientsService {
  constructor(private readonly store: Store, private readonly events: CredentialEvents = NO_CREDENTIAL_EVENTS) {}

  async create(principal: Principal, body: CreateOAuthClientBody): Promise<CreatedOAuthClient> {
    const name = checkedName(body.name);
    checkRedirectUris(body.redirect_uris);
    const scopes = grantableScopes(principal.org.plan, body.scopes, 'a client can only ask for permissions you have');
    if (!scopes.length) throw new AppError('validation_failed', 'scopes must not be empty.', { errors: [{ path: '/scopes', message: 'must not be empty' }] });
    const type = body.type ?? 'confidential';
    const secret = type === 'confidential' ? mintOAuthSecret('clientSecret') : undefined;
    const record = await this.store.oauthClients.create({
      userId: principal.user.id, name, type, secretHash: secret ? sha256(secret) : null, redirectUris: body.redirect_uris, scopes,
    });
    return { ...toClient(record), ...(secret ? { client_secret: secret } : {}) };
  }

  async list(principal: Principal, page: number, limit: number): Promise<Page<OAuthClient>> {
    const { rows, total } = await this.store.oauthClients.list(principal.user.id, page, limit);
    return paginate(rows.map(toClient), page, limit, total);
  }

  async get(principal: Principal, id: string): Promise<OAuthClient> {
    const record = await this.store.oauthClients.findById(id);
    if (!record || record.userId !== principal.user.id) throw notFound('OAuth client');
    return toClient(record);
  }

  /** New name and/or redirect URIs (validated as at registration); another owner's client is not found. */
  async update(principal: Principal, id: string, body: UpdateOAuthClientBody): Promise<OAuthClient> {
    if (body.redirect_uris) checkRedirectUris(body.redirect_uris);
    const record = await this.store.oauthClients.update(principal.user.id, id, {
      ...(body.name !== undefined ? { name: checkedName(body.name) } : {}),
      ...(body.redirect_uris ? { redirectUris: body.redirect_uris } : {}),
    });
    if (!record) throw notFound('OAuth client');
    return toClient(record);
  }

  /** Deleting a client deletes its codes, grants and tokens with it: every token it holds stops working at once. */
  async delete(principal: Principal, id: string): Promise<void> {
    if (!(await this.store.oauthClients.delete(principal.user.id, id))) throw notFound('OAuth client');
    // Whose tokens these were is gone with them: every open connection checks its credential again.
    this.events.revoked({ reason: 'oauth_revoked' });
  }
}
