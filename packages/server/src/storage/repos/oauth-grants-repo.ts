import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Permission } from '@codeloom/protocol';
import type { Database, OAuthCodesTable, OAuthTokensTable } from '../database.js';
import { nowIso } from '../ids.js';

export type OAuthTokenKind = 'access' | 'refresh';

export interface OAuthCodeRecord {
  codeHash: string; clientId: string; userId: string; redirectUri: string; scopes: Permission[];
  codeChallenge: string | null; codeChallengeMethod: string | null;
  created_at: string; expires_at: string; used_at: string | null; replayed_at: string | null;
}

export interface OAuthTokenRecord {
  tokenHash: string; grantId: string; kind: OAuthTokenKind; scopes: Permission[];
  created_at: string; expires_at: string; used_at: string | null; revoked_at: string | null;
  grant: { clientId: string; userId: string; scopes: Permission[]; created_at: string; revoked_at: string | null };
}

export interface NewOAuthToken { hash: string; kind: OAuthTokenKind; scopes: Permission[]; expiresAt: string }

const grantId = () => `grt_${randomBytes(15).toString('base64url')}`;
const parseScopes = (text: string) => JSON.parse(text) as Permission[];

const toCode = (r: OAuthCodesTable): OAuthCodeRecord => ({
  codeHash: r.code_hash, clientId: r.client_id, userId: r.user_id, redirectUri: r.redirect_uri, scopes: parseScopes(r.scopes),
  codeChallenge: r.code_challenge, codeChallengeMethod: r.code_challenge_method,
  created_at: r.created_at, expires_at: r.expires_at, used_at: r.used_at, replayed_at: r.replayed_at,
});

/**
 * Codes, grants and tokens. A grant is what one code exchange created: the
 * refresh-token family of RFC 9700. Revoking a grant kills every token in
 * it, so reuse detection and replayed codes revoke with one update.
 */
export class OAuthGrantsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async saveCode(input: Omit<OAuthCodeRecord, 'created_at' | 'used_at' | 'replayed_at'>): Promise<void> {
    await this.db.insertInto('oauth_codes').values({
      code_hash: input.codeHash, client_id: input.clientId, user_id: input.userId, redirect_uri: input.redirectUri,
      scopes: JSON.stringify(input.scopes), code_challenge: input.codeChallenge, code_challenge_method: input.codeChallengeMethod,
      created_at: nowIso(), expires_at: input.expires_at, used_at: null, replayed_at: null,
    }).execute();
  }

  async findCode(codeHash: string): Promise<OAuthCodeRecord | undefined> {
    const row = await this.db.selectFrom('oauth_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
    return row && toCode(row);
  }

  /** Marks a code used; true for the one caller that got there first. */
  async spendCode(codeHash: string): Promise<boolean> {
    const res = await this.db.updateTable('oauth_codes').set({ used_at: nowIso() })
      .where('code_hash', '=', codeHash).where('used_at', 'is', null).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /** A spent code came back: it leaked. Remember that (a grant still being written checks it) and revoke what it issued. */
  async revokeReplayedCode(codeHash: string): Promise<void> {
    const now = nowIso();
    await this.db.updateTable('oauth_codes').set({ replayed_at: now }).where('code_hash', '=', codeHash).where('replayed_at', 'is', null).execute();
    await this.db.updateTable('oauth_grants').set({ revoked_at: now, revoked_reason: 'code_replay' })
      .where('code_hash', '=', codeHash).where('revoked_at', 'is', null).execute();
  }

  async wasReplayed(codeHash: string): Promise<boolean> {
    const row = await this.db.selectFrom('oauth_codes').select('replayed_at').where('code_hash', '=', codeHash).executeTakeFirst();
    return Boolean(row?.replayed_at);
  }

  /** A new grant with its first tokens, in one transaction. */
  async createGrant(input: { clientId: string; userId: string; codeHash: string | null; scopes: Permission[]; tokens: NewOAuthToken[] }): Promise<string> {
    const id = grantId();
    const now = nowIso();
    await this.db.transaction().execute(async (tx) => {
      await tx.insertInto('oauth_grants').values({ id, client_id: input.clientId, user_id: input.userId, code_hash: input.codeHash, scopes: JSON.stringify(input.scopes), created_at: now, revoked_at: null, revoked_reason: null }).execute();
      await tx.insertInto('oauth_tokens').values(input.tokens.map((t) => toTokenRow(id, t, now))).execute();
    });
    return id;
  }

  async addTokens(grantId: string, tokens: NewOAuthToken[]): Promise<void> {
    const now = nowIso();
    await this.db.insertInto('oauth_tokens').values(tokens.map((t) => toTokenRow(grantId, t, now))).execute();
  }

  async findToken(tokenHash: string): Promise<OAuthTokenRecord | undefined> {
    const row = await this.db.selectFrom('oauth_tokens as t').innerJoin('oauth_grants as g', 'g.id', 't.grant_id')
      .select(['t.token_hash', 't.grant_id', 't.kind', 't.scopes', 't.created_at', 't.expires_at', 't.used_at', 't.revoked_at',
        'g.client_id', 'g.user_id', 'g.scopes as grant_scopes', 'g.created_at as grant_created_at', 'g.revoked_at as grant_revoked_at'])
      .where('t.token_hash', '=', tokenHash).executeTakeFirst();
    if (!row) return undefined;
    return {
      tokenHash: row.token_hash, grantId: row.grant_id, kind: row.kind as OAuthTokenKind, scopes: parseScopes(row.scopes),
      created_at: row.created_at, expires_at: row.expires_at, used_at: row.used_at, revoked_at: row.revoked_at,
      grant: { clientId: row.client_id, userId: row.user_id, scopes: parseScopes(row.grant_scopes), created_at: row.grant_created_at, revoked_at: row.grant_revoked_at },
    };
  }

  /** Rotation: marks a refresh token used; true for the one caller that got there first. */
  async spendRefreshToken(tokenHash: string): Promise<boolean> {
    const res = await this.db.updateTable('oauth_tokens').set({ used_at: nowIso() })
      .where('token_hash', '=', tokenHash).where('kind', '=', 'refresh').where('used_at', 'is', null).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  async revokeGrant(grantId: string, reason: string): Promise<void> {
    await this.db.updateTable('oauth_grants').set({ revoked_at: nowIso(), revoked_reason: reason })
      .where('id', '=', grantId).where('revoked_at', 'is', null).execute();
  }

  async isGrantRevoked(grantId: string): Promise<boolean> {
    const row = await this.db.selectFrom('oauth_grants').select('revoked_at').where('id', '=', grantId).executeTakeFirst();
    return !row || row.revoked_at !== null;
  }

  async revokeToken(tokenHash: string): Promise<void> {
    await this.db.updateTable('oauth_tokens').set({ revoked_at: nowIso() }).where('token_hash', '=', tokenHash).where('revoked_at', 'is', null).execute();
  }

  /** Drops codes and tokens that expired before `before`; grants left without tokens go too. */
  async purgeExpired(before: string): Promise<void> {
    await this.db.deleteFrom('oauth_codes').where('expires_at', '<', before).execute();
    await this.db.deleteFrom('oauth_tokens').where('expires_at', '<', before).execute();
    await this.db.deleteFrom('oauth_grants').where('created_at', '<', before)
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('oauth_tokens').select('token_hash').whereRef('oauth_tokens.grant_id', '=', 'oauth_grants.id'))))
      .execute();
  }
}

const toTokenRow = (grantId: string, t: NewOAuthToken, now: string): OAuthTokensTable => ({
  token_hash: t.hash, grant_id: grantId, kind: t.kind, scopes: JSON.stringify(t.scopes), created_at: now, expires_at: t.expiresAt, used_at: null, revoked_at: null,
});
