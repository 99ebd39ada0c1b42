import { randomUUID } from 'node:crypto';
import {
  SignJWT, createLocalJWKSet, exportJWK, generateKeyPair, importJWK, jwtVerify, errors as joseErrors,
  type JSONWebKeySet, type JWK, type JWTPayload, type CryptoKey,
} from 'jose';
import type { SigningKeysRepo } from '../../storage/repos/signing-keys-repo.js';
import { nowIso } from '../../storage/ids.js';
import { AppError } from '../../errors.js';

const ALG = 'EdDSA';
const FIRST_KID = 'ed25519-1';

export interface AccessClaims extends JWTPayload {
  sub: string;
  sid: string;
  scope: string;
  env: string;
  jti: string;
  exp: number;
}

/**
 * Ed25519 signing keys, created on first start and kept in the database so
 * every instance signs and verifies alike. Only EdDSA is accepted: `none`
 * and HMAC tokens fail before any key is tried.
 */
export class KeyRing {
  private signer: { kid: string; key: CryptoKey } | undefined;
  private jwks: JSONWebKeySet = { keys: [] };
  private verifyKeys: ReturnType<typeof createLocalJWKSet> | undefined;
  private lastReload = 0;
  /** Verified tokens, so a client that reuses its token skips the signature check; bounded, expiry still checked. */
  private readonly verified = new Map<string, AccessClaims>();

  constructor(private readonly repo: SigningKeysRepo, private readonly issuer: string, private readonly audience: string) {}

  async init(): Promise<void> {
    let rows = await this.repo.list();
    if (rows.length === 0) {
      const { privateKey, publicKey } = await generateKeyPair(ALG, { crv: 'Ed25519', extractable: true });
      // The first key has a fixed kid: instances starting together on an empty database all try to insert it,
      // one insert wins (the others are no-ops on the primary key) and every instance loads that one key.
      const kid = FIRST_KID;
      const pub = { ...(await exportJWK(publicKey)), kid, alg: ALG, use: 'sig' };
      const priv = { ...(await exportJWK(privateKey)), kid, alg: ALG };
      await this.repo.insert({ kid, alg: ALG, private_jwk: JSON.stringify(priv), public_jwk: JSON.stringify(pub), created_at: nowIso() });
      rows = await this.repo.list();
    }
    await this.load(rows);
  }

  private async load(rows: Awaited<ReturnType<SigningKeysRepo['list']>>) {
    const first = rows[0]!;
    this.signer = { kid: first.kid, key: (await importJWK(JSON.parse(first.private_jwk) as JWK, ALG)) as CryptoKey };
    this.jwks = { keys: rows.map((r) => JSON.parse(r.public_jwk) as JWK) };
    this.verifyKeys = createLocalJWKSet(this.jwks);
    this.lastReload = Date.now();
  }

  publicJwks(): JSONWebKeySet {
    return this.jwks;
  }

  async sign(claims: { sub: string; sid: string; scope: string; env: string }, ttlSec: number): Promise<string> {
    if (!this.signer) throw new Error('KeyRing not initialised');
    return new SignJWT({ sid: claims.sid, scope: claims.scope, env: claims.env })
      .setProtectedHeader({ alg: ALG, kid: this.signer.kid, typ: 'at+jwt' })
      .setIssuer(this.issuer).setAudience(this.audience).setSubject(claims.sub)
      .setIssuedAt().setExpirationTime(Math.floor(Date.now() / 1000) + ttlSec).setJti(randomUUID())
      .sign(this.signer.key);
  }

  /** Verified claims, or AppError invalid_token / token_expired. */
  async verify(token: string): Promise<AccessClaims> {
    const cached = this.verified.get(token);
    if (cached) {
      if (cached.exp * 1000 <= Date.now()) throw expired();
      return cached;
    }
    try {
      const claims = await this.verifyOnce(token);
      if (this.verified.size >= 10_000) this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(token, claims);
      return claims;
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) throw expired();
      if (error instanceof joseErrors.JWKSNoMatchingKey && Date.now() - this.lastReload > 5_000) {
        // Another instance may have created a key after we loaded ours.
        await this.load(await this.repo.list());
        return this.verify(token);
      }
      throw new AppError('invalid_token', 'The access token is malformed, has a bad signature, or was not issued by this server.');
    }
  }

  private async verifyOnce(token: string): Promise<AccessClaims> {
    const { payload } = await jwtVerify(token, this.verifyKeys!, { algorithms: [ALG], issuer: this.issuer, audience: this.audience, requiredClaims: ['sub', 'sid', 'exp', 'jti', 'iat'] });
    if (typeof payload.sid !== 'string' || typeof payload.scope !== 'string') throw new joseErrors.JWTClaimValidationFailed('missing claims', payload);
    return payload as AccessClaims;
  }
}

function expired() {
  return new AppError('token_expired', 'The access token has expired; refresh it and repeat the request.', {
    headers: { 'www-authenticate': 'Bearer error="invalid_token", error_description="token expired"' },
  });
}
