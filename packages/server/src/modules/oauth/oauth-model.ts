import OAuth2Server from '@node-oauth/oauth2-server';
import type { Permission } from '@codeloom/protocol';
import type { Store } from '../../storage/store.js';
import type { OAuthClientRecord } from '../../storage/repos/oauth-clients-repo.js';
import type { NewOAuthToken } from '../../storage/repos/oauth-grants-repo.js';
import { hashesMatch, mintOAuthSecret, sha256 } from '../../identity/secrets.js';
import { NO_CREDENTIAL_EVENTS, type CredentialEvents } from '../../identity/credential-events.js';

export const SUPPORTED_GRANTS = ['authorization_code', 'refresh_token'] as const;

/** The client as the library sees it; `record` is ours. */
export interface LibraryClient extends OAuth2Server.Client {
  id: string;
  redirectUris: string[];
  grants: string[];
  record: OAuthClientRecord;
}

/**
 * The library hands our user object back to saveToken untouched; a refresh
 * carries its grant (token family) in it, because saveToken is not told
 * which refresh token it is replacing.
 */
export interface OAuthUser extends OAuth2Server.User {
  id: string;
  grantId?: string;
  grantScopes?: Permission[];
  /** The refresh token being exchanged (its hash): spent in saveToken, once every check has passed. */
  refreshHash?: string;
}

const toLibraryClient = (record: OAuthClientRecord): LibraryClient => ({ id: record.id, redirectUris: record.redirectUris, grants: [...SUPPORTED_GRANTS], record });
const iso = (d: Date | undefined) => (d ?? new Date()).toISOString();

/**
 * The storage adapter of @node-oauth/oauth2-server: the library runs the
 * grants (code checks, PKCE, redirect URI match, rotation order); this class
 * only stores and finds things, hashed, and turns replays into revocations.
 *
 * `checkSecrets`: the token endpoint authenticates clients (confidential ones
 * by secret; public ones must not send one); the authorize endpoint looks
 * clients up by id only, as RFC 6749 §4.1.1 has no secret there.
 */
export class OAuthModel implements OAuth2Server.AuthorizationCodeModel, OAuth2Server.RefreshTokenModel {
  constructor(private readonly store: Store, private readonly checkSecrets: boolean, private readonly events: CredentialEvents = NO_CREDENTIAL_EVENTS) {}

  /** A grant (or every grant of a replayed code) was revoked: open connections of its user check their credentials again. */
  private revoked(userId: string): void {
    this.events.revoked({ userId, reason: 'oauth_revoked' });
  }

  async findClient(clientId: string): Promise<LibraryClient | undefined> {
    const record = await this.store.oauthClients.findById(clientId);
    return record && toLibraryClient(record);
  }

  async getClient(clientId: string, clientSecret?: string | null): Promise<LibraryClient | false> {
    const client = await this.findClient(clientId);
    if (!client) return false;
    if (!this.checkSecrets) return client;
    const { record } = client;
    if (record.type === 'public') return clientSecret ? false : client;
    return clientSecret && record.secretHash && hashesMatch(sha256(clientSecret), record.secretHash) ? client : false;
  }

  async validateRedirectUri(redirectUri: string, client: OAuth2Server.Client): Promise<boolean> {
    return (client as LibraryClient).redirectUris.includes(redirectUri); // exact string match (RFC 9700 §2.1)
  }

  async validateScope(_user: OAuth2Server.User, client: OAuth2Server.Client, scope?: string[]): Promise<string[] | false> {
    const allowed: readonly string[] = (client as LibraryClient).record.scopes;
    return scope?.length && scope.every((s) => allowed.includes(s)) ? scope : false;
  }

  async generateAuthorizationCode(): Promise<string> { return mintOAuthSecret('code'); }
  async generateAccessToken(): Promise<string> { return mintOAuthSecret('accessToken'); }
  async generateRefreshToken(): Promise<string> { return mintOAuthSecret('refreshToken'); }

  async saveAuthorizationCode(code: Pick<OAuth2Server.AuthorizationCode, 'authorizationCode' | 'expiresAt' | 'redirectUri' | 'scope' | 'codeChallenge' | 'codeChallengeMethod'>, client: OAuth2Server.Client, user: OAuth2Server.User): Promise<OAuth2Server.AuthorizationCode> {
    await this.store.oauthGrants.saveCode({
      codeHash: sha256(code.authorizationCode), clientId: client.id, userId: (user as OAuthUser).id, redirectUri: code.redirectUri,
      scopes: (code.scope ?? []) as Permission[], codeChallenge: code.codeChallenge ?? null, codeChallengeMethod: code.codeChallengeMethod ?? null,
      expires_at: code.expiresAt.toISOString(),
    });
    return { ...code, client, user };
  }

  async getAuthorizationCode(authorizationCode: string): Promise<OAuth2Server.AuthorizationCode | false> {
    const codeHash = sha256(authorizationCode);
    const row = await this.store.oauthGrants.findCode(codeHash);
    if (!row) return false;
    if (row.used_at) {
      await this.store.oauthGrants.revokeReplayedCode(codeHash);
      this.revoked(row.userId);
      throw new OAuth2Server.InvalidGrantError('Invalid grant: authorization code was already used; the tokens it issued have been revoked');
    }
    const client = await this.findClient(row.clientId);
    if (!client) return false;
    return {
      authorizationCode, expiresAt: new Date(row.expires_at), redirectUri: row.redirectUri, scope: row.scopes, client, user: { id: row.userId },
      ...(row.codeChallenge ? { codeChallenge: row.codeChallenge, codeChallengeMethod: row.codeChallengeMethod ?? 'S256' } : {}),
    };
  }

  /**
   * The library calls this before it checks PKCE, the redirect URI and the
   * scope. Spending here would let an error response consume the code
   * (RFC 6749 §5.2 forbids it), so the code is spent in saveToken, which
   * the library reaches only when every check has passed.
   */
  async revokeAuthorizationCode(): Promise<boolean> {
    return true;
  }

  async saveToken(token: OAuth2Server.Token, client: OAuth2Server.Client, user: OAuth2Server.User): Promise<OAuth2Server.Token> {
    const u = user as OAuthUser;
    const scopes = (token.scope ?? []) as Permission[];
    const grants = this.store.oauthGrants;
    const access: NewOAuthToken = { hash: sha256(token.accessToken), kind: 'access', scopes, expiresAt: iso(token.accessTokenExpiresAt) };
    // RFC 6749 §6: a rotated refresh token keeps the grant's full scope even when this access token was narrowed.
    const refresh = (grantScopes: Permission[]): NewOAuthToken[] => token.refreshToken ? [{ hash: sha256(token.refreshToken), kind: 'refresh', scopes: grantScopes, expiresAt: iso(token.refreshTokenExpiresAt) }] : [];
    let grantId: string;
    if (token.authorizationCode) {
      const codeHash = sha256(token.authorizationCode);
      // Spent now, atomically: a second spender (a concurrent replay) loses and revokes whatever the first one issues.
      if (!(await grants.spendCode(codeHash))) {
        await grants.revokeReplayedCode(codeHash);
        this.revoked(u.id);
        throw new OAuth2Server.InvalidGrantError('Invalid grant: authorization code is invalid');
      }
      grantId = await grants.createGrant({ clientId: client.id, userId: u.id, codeHash, scopes, tokens: [access, ...refresh(scopes)] });
      // Checked after the grant is committed, so a replay racing this exchange revokes it either here or there.
      if (await grants.wasReplayed(codeHash)) {
        await grants.revokeGrant(grantId, 'code_replay');
        this.revoked(u.id);
        throw new OAuth2Server.InvalidGrantError('Invalid grant: authorization code was used twice; the tokens it issued have been revoked');
      }
    } else {
      if (!u.grantId || !u.refreshHash) throw new OAuth2Server.ServerError('Server error: refresh without a grant');
      grantId = u.grantId;
      // Rotation, once every check has passed: losing the race to spend the old refresh token is reuse.
      if (!(await grants.spendRefreshToken(u.refreshHash))) {
        await grants.revokeGrant(grantId, 'refresh_reuse');
        this.revoked(u.id);
        throw new OAuth2Server.InvalidGrantError('Invalid grant: refresh token is invalid or could not be revoked');
      }
      await grants.addTokens(grantId, [access, ...refresh(u.grantScopes ?? scopes)]);
      if (await grants.isGrantRevoked(grantId)) throw new OAuth2Server.InvalidGrantError('Invalid grant: this grant was revoked');
    }
    return { ...token, client, user: { id: u.id, grantId } };
  }

  async getAccessToken(accessToken: string): Promise<OAuth2Server.Token | false> {
    const row = await this.store.oauthGrants.findToken(sha256(accessToken));
    if (!row || row.kind !== 'access' || row.revoked_at || row.grant.revoked_at) return false;
    const client = await this.findClient(row.grant.clientId);
    if (!client) return false;
    return { accessToken, accessTokenExpiresAt: new Date(row.expires_at), scope: row.scopes, client, user: { id: row.grant.userId, grantId: row.grantId } };
  }

  async getRefreshToken(refreshToken: string): Promise<OAuth2Server.RefreshToken | false> {
    const row = await this.store.oauthGrants.findToken(sha256(refreshToken));
    if (!row || row.kind !== 'refresh' || row.revoked_at || row.grant.revoked_at) return false;
    if (row.used_at) {
      await this.store.oauthGrants.revokeGrant(row.grantId, 'refresh_reuse');
      this.revoked(row.grant.userId);
      throw new OAuth2Server.InvalidGrantError('Invalid grant: refresh token was already used; every token of this grant has been revoked');
    }
    const client = await this.findClient(row.grant.clientId);
    if (!client) return false;
    const user: OAuthUser = { id: row.grant.userId, grantId: row.grantId, grantScopes: row.grant.scopes, refreshHash: row.tokenHash };
    return { refreshToken, refreshTokenExpiresAt: new Date(row.expires_at), scope: row.scopes, client, user };
  }

  /**
   * The library calls this before it checks the requested scope; spending
   * the refresh token here would let an invalid_scope answer consume it and
   * later revoke the grant as reuse (RFC 6749 §5.2). saveToken spends it.
   */
  async revokeToken(): Promise<boolean> {
    return true;
  }
}
