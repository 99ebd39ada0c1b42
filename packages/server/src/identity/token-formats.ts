import type { Environment } from '@codeloom/protocol';

/**
 * The form of every credential this server issues says what it is, so a
 * bearer token is routed without a lookup and a leaked string is
 * recognisable in logs and secret scanners.
 */

/** API keys: `cl_live_…` in production, `cl_test_…` in the sandbox. */
export const API_KEY_PREFIX: Record<Environment, string> = { production: 'cl_live_', sandbox: 'cl_test_' };

/** Refresh tokens of sessions (JSON login and the dashboard's cookie). */
export const REFRESH_TOKEN_PREFIX = 'clr_';

/** Password reset tokens (emailed links; stored as SHA-256, good once). */
export const PASSWORD_RESET_PREFIX = 'clpr_';

/** OAuth secrets: opaque random strings, one prefix per kind. */
export const OAUTH_PREFIX = { accessToken: 'clo_at_', refreshToken: 'clo_rt_', code: 'clo_ac_', clientSecret: 'clo_cs_' } as const;
export type OAuthSecretKind = keyof typeof OAUTH_PREFIX;

export const looksLikeApiKey = (credential: string) => credential.startsWith(API_KEY_PREFIX.production) || credential.startsWith(API_KEY_PREFIX.sandbox);
export const looksLikeJwt = (credential: string) => /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(credential);
export const looksLikeOAuthAccessToken = (credential: string) => credential.startsWith(OAUTH_PREFIX.accessToken);

/** The credential of `Authorization: Bearer <credential>`, or undefined when the header has another form. */
export const bearerCredential = (authorization: string): string | undefined => /^Bearer[ ]+(\S+)\s*$/i.exec(authorization)?.[1];
