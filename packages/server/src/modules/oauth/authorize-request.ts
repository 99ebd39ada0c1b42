import { OAUTH_SCOPES as PERMISSIONS, type Permission } from '@codeloom/protocol';
import type { OAuthClientRecord } from '../../storage/repos/oauth-clients-repo.js';

export const AUTHORIZE_PARAMS = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method'] as const;
export type AuthorizeParams = Partial<Record<(typeof AUTHORIZE_PARAMS)[number], string>>;

export type AuthorizeCheck =
  /** The client or redirect URI cannot be trusted: show an error page, never redirect (RFC 6749 §4.1.2.1). */
  | { kind: 'error_page'; title: string; message: string }
  /** The client and redirect URI are good; the rest of the request is not: tell the client by redirect. */
  | { kind: 'error_redirect'; location: string }
  | { kind: 'ok'; client: OAuthClientRecord; params: AuthorizeParams; scopes: Permission[] };

const VSCHAR = /^[\x20-\x7E]*$/;
/** A base64url SHA-256: exactly 43 characters (RFC 7636 §4.2). */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** Adds the error (or code), state and our issuer (RFC 9207, against mix-up attacks) to a registered redirect URI. */
export function redirectWith(redirectUri: string, params: Record<string, string | undefined>, issuer: string): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  url.searchParams.set('iss', issuer);
  return url.toString();
}

/**
 * Checks an authorization request (query of GET /oauth/authorize, or the
 * hidden fields of the sign-in and consent forms) before anyone is asked
 * anything. The library checks the same again when it issues the code;
 * doing it first lets us show an error page instead of a sign-in form for
 * a request that can never succeed.
 */
export async function inspectAuthorizeRequest(
  raw: Record<string, unknown>,
  findClient: (id: string) => Promise<OAuthClientRecord | undefined>,
  issuer: string,
): Promise<AuthorizeCheck> {
  const params: AuthorizeParams = {};
  const repeated: string[] = [];
  for (const name of AUTHORIZE_PARAMS) {
    const value = raw[name];
    if (Array.isArray(value)) repeated.push(name);
    else if (typeof value === 'string' && value !== '') params[name] = value;
  }

  const clientId = params.client_id;
  const client = clientId && !repeated.includes('client_id') && clientId.length <= 64 ? await findClient(clientId) : undefined;
  if (!client) {
    return { kind: 'error_page', title: 'Unknown application', message: clientId
      ? 'The application that sent you here is not registered with Codeloom, or it was deleted. Nothing was shared with it.'
      : 'This sign-in link is incomplete: it does not say which application is asking (client_id is missing).' };
  }
  if (!params.redirect_uri || repeated.includes('redirect_uri')) {
    return { kind: 'error_page', title: 'Incomplete sign-in link', message: `${client.name} did not say where to send you back (redirect_uri is missing), so Codeloom cannot continue.` };
  }
  if (!client.redirectUris.includes(params.redirect_uri)) {
    return { kind: 'error_page', title: 'Unregistered return address', message: `${client.name} asked to send you back to an address it has not registered with Codeloom. To keep your account safe, you will not be sent there.` };
  }

  const state = params.state !== undefined && VSCHAR.test(params.state) && params.state.length <= 1024 ? params.state : undefined;
  const fail = (error: string, description: string): AuthorizeCheck =>
    ({ kind: 'error_redirect', location: redirectWith(params.redirect_uri!, { error, error_description: description, state }, issuer) });

  if (repeated.length) return fail('invalid_request', `Parameter ${repeated[0]} was sent more than once.`);
  if (params.state !== undefined && state === undefined) return fail('invalid_request', 'state must be at most 1024 printable ASCII characters.');
  if (!params.response_type) return fail('invalid_request', 'response_type is missing; use response_type=code.');
  if (params.response_type !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported (no implicit grant).');

  if (params.code_challenge !== undefined) {
    if (params.code_challenge_method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256 (plain is not accepted).');
    if (!S256_CHALLENGE.test(params.code_challenge)) return fail('invalid_request', 'code_challenge must be the base64url SHA-256 of the code verifier (43 characters).');
  } else if (params.code_challenge_method !== undefined) {
    return fail('invalid_request', 'code_challenge_method was sent without code_challenge.');
  } else if (client.type === 'public') {
    return fail('invalid_request', 'Public clients must use PKCE: send code_challenge and code_challenge_method=S256.');
  }

  const requested = params.scope === undefined ? [...client.scopes] : params.scope.trim().split(/\s+/).filter(Boolean);
  const unknown = requested.filter((s) => !(PERMISSIONS as readonly string[]).includes(s));
  if (unknown.length) return fail('invalid_scope', `Unknown scope ${unknown.join(', ')}; scopes are ${PERMISSIONS.join(', ')}.`);
  const beyond = requested.filter((s) => !(client.scopes as string[]).includes(s));
  if (beyond.length) return fail('invalid_scope', `This client is not registered for ${beyond.join(', ')}; it may ask for ${client.scopes.join(', ')}.`);
  if (!requested.length) return fail('invalid_scope', 'No scope was requested.');
  const scopes = PERMISSIONS.filter((p) => requested.includes(p));
  return { kind: 'ok', client, params: { ...params, scope: scopes.join(' ') }, scopes };
}
