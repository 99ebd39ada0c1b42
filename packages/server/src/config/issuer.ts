/** Settings computed from others at load time. */
export interface DerivedSettings {
  /** `iss` of the access tokens this service signs and accepts. */
  tokenIssuer: string;
}

/** The issuer of access tokens when neither CODELOOM_ISSUER nor CODELOOM_PUBLIC_URL is set: the same on every instance. */
export const DEFAULT_TOKEN_ISSUER = 'codeloom';

/**
 * One public identity for every instance. Tokens: CODELOOM_ISSUER, else
 * CODELOOM_PUBLIC_URL, else the fixed `codeloom`, never the listening
 * address, so instances that differ only in HOST or PORT accept each other's
 * tokens. The OAuth issuer (and OpenAPI server URL) is a URL by nature:
 * CODELOOM_ISSUER, else CODELOOM_PUBLIC_URL, else the address this instance
 * listens on.
 */
export function resolveIssuers(out: Record<string, unknown>): void {
  const publicUrl = typeof out.publicUrl === 'string' ? out.publicUrl.replace(/\/+$/, '') : undefined;
  if (publicUrl) out.publicUrl = publicUrl;
  const explicit = typeof out.issuer === 'string' && out.issuer ? out.issuer : undefined;
  out.tokenIssuer = explicit ?? publicUrl ?? DEFAULT_TOKEN_ISSUER;
  out.issuer = explicit ?? publicUrl ?? `http://${out.host}:${out.port}`;
}
