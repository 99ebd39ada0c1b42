import OAuth2Server from '@node-oauth/oauth2-server';
import { OAUTH_SCOPES, type AuthorizationServerMetadata, type IntrospectionResponse, type OAuthTokenResponse } from '@codeloom/protocol';
import type { Store } from '../../storage/store.js';
import type { Account } from '../../storage/repos/accounts-repo.js';
import { nowIso } from '../../storage/ids.js';
import { sha256 } from '../../identity/secrets.js';
import { narrowToPlan } from '../../identity/scopes.js';
import { SUPPORTED_GRANTS, OAuthModel, type LibraryClient } from './oauth-model.js';
import { inspectAuthorizeRequest, redirectWith, type AuthorizeCheck } from './authorize-request.js';
import type { CredentialEvents } from '../../identity/credential-events.js';

export interface OAuthSettings {
  issuer: string;
  accessTokenTtl: number;
  refreshTokenTtl: number;
  oauthCodeTtl: number;
  /** Told of revocations, so open WebSocket connections holding a revoked token close. */
  events?: CredentialEvents;
}

type Headers = Record<string, string | string[] | undefined>;
export type FormBody = Record<string, string>;

const PURGE_EVERY_MS = 10 * 60_000;
/** Spent codes and rotated refresh tokens are kept this long past expiry, so a late replay is still recognised. */
const KEEP_EXPIRED_MS = 60 * 60_000;

/**
 * The authorization server: @node-oauth/oauth2-server runs the grants over
 * OAuthModel; this class feeds it, and adds what the library does not have
 * (revocation, introspection, metadata, the RFC 9207 `iss` parameter).
 */
export class OAuthService {
  private readonly tokenModel: OAuthModel;
  private readonly tokenServer: OAuth2Server;
  private readonly authorizeServer: OAuth2Server;
  private readonly base: string;
  private lastPurge = 0;

  constructor(private readonly store: Store, private readonly settings: OAuthSettings) {
    this.base = settings.issuer.replace(/\/+$/, '');
    this.tokenModel = new OAuthModel(store, true, settings.events);
    this.tokenServer = new OAuth2Server({
      model: this.tokenModel,
      accessTokenLifetime: settings.accessTokenTtl,
      refreshTokenLifetime: settings.refreshTokenTtl,
      alwaysIssueNewRefreshToken: true,
      // The model authenticates by client type: confidential clients need their secret, public ones have none (and must use PKCE).
      requireClientAuthentication: { authorization_code: false, refresh_token: false },
    });
    this.authorizeServer = new OAuth2Server({
      model: new OAuthModel(store, false),
      authorizationCodeLifetime: settings.oauthCodeTtl,
      allowEmptyState: true,
    });
  }

  get issuer() { return this.settings.issuer; }

  inspect(raw: Record<string, unknown>): Promise<AuthorizeCheck> {
    return inspectAuthorizeRequest(raw, (id) => this.store.oauthClients.findById(id), this.settings.issuer);
  }

  /** The person decided on the consent page: the redirect back to the client, with a code or with access_denied. */
  async decide(check: Extract<AuthorizeCheck, { kind: 'ok' }>, account: Account, allow: boolean): Promise<string> {
    const { params } = check;
    const back = (extra: Record<string, string>) => redirectWith(params.redirect_uri!, { ...extra, state: params.state }, this.settings.issuer);
    if (!allow) return back({ error: 'access_denied', error_description: 'The user denied the request.' });
    const scopes = narrowToPlan(check.scopes, account.org.plan);
    if (!scopes.length) return back({ error: 'invalid_scope', error_description: `The ${account.org.plan} plan of this account grants none of the requested scopes.` });
    const request = libraryRequest({}, { ...params, scope: scopes.join(' ') });
    const response = new OAuth2Server.Response();
    try {
      const code = await this.authorizeServer.authorize(request, response, { authenticateHandler: { handle: async () => ({ id: account.user.id }) } });
      return back({ code: code.authorizationCode });
    } catch (error) {
      if (!(error instanceof OAuth2Server.OAuthError) || error instanceof OAuth2Server.ServerError) throw error;
      return back({ error: error.name, error_description: error.message });
    }
  }

  async token(headers: Headers, body: FormBody): Promise<{ body: OAuthTokenResponse; headers: Record<string, string> }> {
    if (!body.grant_type) throw new OAuth2Server.InvalidRequestError('Missing parameter: `grant_type`');
    if (!(SUPPORTED_GRANTS as readonly string[]).includes(body.grant_type)) {
      throw new OAuth2Server.UnsupportedGrantTypeError(`Unsupported grant type: use ${SUPPORTED_GRANTS.join(' or ')}`);
    }
    const response = new OAuth2Server.Response();
    try {
      await this.tokenServer.token(libraryRequest(headers, body), response);
      this.purgeNowAndThen();
      // Every grant issues a new access token for the whole configured lifetime (RFC 6749 §5.1: its lifetime, not what is left of it on a slow response).
      return { body: { ...response.body, expires_in: this.settings.accessTokenTtl }, headers: response.headers ?? {} };
    } catch (error) {
      // The library puts WWW-Authenticate on its response object when Basic authentication failed.
      if (error instanceof OAuth2Server.OAuthError) Object.assign(error, { headers: response.headers });
      throw error;
    }
  }

  /** RFC 7009: revoking a refresh token revokes its whole grant; an access token only itself. Unknown tokens are fine. */
  async revoke(headers: Headers, body: FormBody): Promise<void> {
    const client = await this.authenticateClient(headers, body, true);
    if (!body.token) throw new OAuth2Server.InvalidRequestError('Missing parameter: `token`');
    const record = await this.store.oauthGrants.findToken(sha256(body.token));
    if (!record || record.grant.clientId !== client.id) return; // another client's token: nothing to say about it
    if (record.kind === 'refresh') await this.store.oauthGrants.revokeGrant(record.grantId, 'revoked_by_client');
    else await this.store.oauthGrants.revokeToken(record.tokenHash);
    this.settings.events?.revoked({ userId: record.grant.userId, reason: 'oauth_revoked' });
  }

  /** RFC 7662, for confidential clients, about their own tokens only. */
  async introspect(headers: Headers, body: FormBody): Promise<IntrospectionResponse> {
    const client = await this.authenticateClient(headers, body, false);
    if (!body.token) throw new OAuth2Server.InvalidRequestError('Missing parameter: `token`');
    const record = await this.store.oauthGrants.findToken(sha256(body.token));
    const dead = !record || record.grant.clientId !== client.id || record.revoked_at || record.grant.revoked_at
      || record.expires_at <= nowIso() || (record.kind === 'refresh' && record.used_at);
    if (dead) return { active: false };
    const account = await this.store.accounts.findById(record.grant.userId);
    if (!account) return { active: false };
    return {
      active: true,
      scope: narrowToPlan(record.scopes, account.org.plan).join(' '),
      client_id: client.id,
      username: account.user.email,
      sub: account.user.id,
      token_type: record.kind === 'access' ? 'Bearer' : 'refresh_token',
      exp: Math.floor(Date.parse(record.expires_at) / 1000),
      iat: Math.floor(Date.parse(record.created_at) / 1000),
      iss: this.settings.issuer,
    };
  }

  metadata(): AuthorizationServerMetadata {
    const auth = ['client_secret_basic', 'client_secret_post', 'none'];
    return {
      issuer: this.settings.issuer,
      authorization_endpoint: `${this.base}/oauth/authorize`,
      token_endpoint: `${this.base}/oauth/token`,
      revocation_endpoint: `${this.base}/oauth/revoke`,
      introspection_endpoint: `${this.base}/oauth/introspect`,
      scopes_supported: [...OAUTH_SCOPES],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: [...SUPPORTED_GRANTS],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: auth,
      revocation_endpoint_auth_methods_supported: auth,
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      authorization_response_iss_parameter_supported: true,
      service_documentation: `${this.base}/docs`,
    };
  }

  /** Client authentication for revoke and introspect (RFC 6749 §2.3.1): HTTP Basic or client_id/client_secret in the body. */
  private async authenticateClient(headers: Headers, body: FormBody, allowPublic: boolean): Promise<LibraryClient> {
    const basic = parseBasic(headers.authorization);
    const id = basic?.id ?? body.client_id;
    const secret = basic ? basic.secret : body.client_secret;
    // RFC 6749 §5.2: the Basic challenge only answers a client that tried Basic.
    const refuse = (message: string) => Object.assign(new OAuth2Server.InvalidClientError(message, { code: 401 }), {
      headers: basic ? { 'www-authenticate': 'Basic realm="codeloom"' } : {},
    });
    if (!id) throw refuse('Invalid client: send client_id and client_secret (HTTP Basic or form fields)');
    const client = await this.tokenModel.getClient(id, secret);
    if (!client) throw refuse('Invalid client: client authentication failed');
    if (!allowPublic && client.record.type === 'public') throw refuse('Invalid client: only confidential clients may introspect; call GET /api/v1/auth/verify with the token instead');
    return client;
  }

  /** Expired codes, tokens and browser sessions are dropped in passing, at most every ten minutes per instance. */
  private purgeNowAndThen(): void {
    if (Date.now() - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = Date.now();
    const before = new Date(Date.now() - KEEP_EXPIRED_MS).toISOString();
    Promise.all([this.store.oauthGrants.purgeExpired(before), this.store.webSessions.purgeExpired(nowIso())]).catch(() => { /* retried next time */ });
  }
}

/**
 * The library insists on a form-encoded request; JSON bodies were already
 * parsed into the same shape. It also reads HTTP Basic without the form
 * decoding RFC 6749 §2.3.1 asks for (clients such as openid-client encode
 * even `_`), so the credentials are handed over decoded.
 */
function libraryRequest(headers: Headers, body: FormBody): OAuth2Server.Request {
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) flat[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  const basic = parseBasic(flat.authorization);
  if (basic) flat.authorization = `Basic ${Buffer.from(`${basic.id}:${basic.secret}`).toString('base64')}`;
  flat['content-type'] = 'application/x-www-form-urlencoded';
  flat['content-length'] ??= '0';
  return new OAuth2Server.Request({ method: 'POST', headers: flat, query: {}, body });
}

function parseBasic(authorization: string | string[] | undefined): { id: string; secret: string } | undefined {
  const value = Array.isArray(authorization) ? authorization[0] : authorization;
  const match = value && /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(value);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  // RFC 6749 §2.3.1: both parts are form-urlencoded before they are joined.
  const unform = (s: string) => { try { return decodeURIComponent(s.replace(/\+/g, ' ')); } catch { return s; } };
  return { id: unform(decoded.slice(0, colon)), secret: unform(decoded.slice(colon + 1)) };
}
