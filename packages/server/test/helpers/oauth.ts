import * as oidc from 'openid-client';
import { request } from './http.js';

/** The issuer the test server is configured with (CODELOOM_ISSUER in startTestServer): a public name in front of a loopback port. */
export const TEST_ISSUER = 'http://codeloom.test';
export const CALLBACK = 'http://127.0.0.1:5599/callback';

/** Requests to the issuer's public address reach the test server, as they would through a reverse proxy. */
export function viaTestServer(base: string, ip: string) {
  return (url: string, init: RequestInit = {}) => {
    const target = url.startsWith(TEST_ISSUER) ? base + url.slice(TEST_ISSUER.length) : url;
    return fetch(target, { ...init, headers: { ...(init.headers as Record<string, string>), 'x-forwarded-for': ip } });
  };
}

export async function registerClient(base: string, token: string, body: Record<string, unknown>) {
  const res = await request(`${base}/api/v1/oauth/clients`, { token, body });
  if (res.status !== 201) throw new Error(`client registration failed: ${res.status} ${res.text}`);
  return res.body as { id: string; client_id: string; client_secret?: string; name: string; type: string; redirect_uris: string[]; scopes: string[] };
}

/** openid-client configured against the test server through RFC 8414 discovery. */
export async function discover(base: string, ip: string, client: { client_id: string; client_secret?: string }, auth: 'basic' | 'post' | 'none' = 'basic') {
  const clientAuth = auth === 'none' ? oidc.None() : auth === 'post' ? oidc.ClientSecretPost(client.client_secret) : oidc.ClientSecretBasic(client.client_secret);
  const fetcher = viaTestServer(base, ip);
  return oidc.discovery(new URL(TEST_ISSUER), client.client_id, undefined, clientAuth, {
    algorithm: 'oauth2',
    execute: [oidc.allowInsecureRequests],
    [oidc.customFetch]: (url, options) => fetcher(url, options as RequestInit),
  });
}

const unescapeHtml = (s: string) => s.replace(/&(amp|lt|gt|quot|#39);/g, (_m, c: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[c]!);

/** Hidden fields of the page's form posting to `action`. */
export function formFields(html: string, action: string): Record<string, string> {
  const form = [...html.matchAll(/<form method="post" action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/g)].find((m) => m[1] === action);
  if (!form) throw new Error(`no form posting to ${action} in page:\n${html.slice(0, 2000)}`);
  const fields: Record<string, string> = {};
  for (const m of form[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[m[1]!] = unescapeHtml(m[2]!);
  return fields;
}

/** A cookie-keeping browser made of fetch: follows nothing, so each redirect can be looked at. */
export class FormBrowser {
  readonly cookies = new Map<string, string>();
  constructor(private readonly base: string, private readonly ip: string, private readonly extraHeaders: Record<string, string> = {}) {}

  private absolute(url: string) {
    if (url.startsWith(TEST_ISSUER)) return this.base + url.slice(TEST_ISSUER.length);
    return url.startsWith('/') ? this.base + url : url;
  }

  async open(url: string, form?: Record<string, string>) {
    const headers: Record<string, string> = { 'x-forwarded-for': this.ip, ...this.extraHeaders };
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(this.absolute(url), { method: form ? 'POST' : 'GET', headers, body: form ? new URLSearchParams(form) : undefined, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (/max-age=0/i.test(line)) this.cookies.delete(name); else this.cookies.set(name, value);
    }
    return { status: res.status, location: res.headers.get('location'), html: await res.text(), headers: res.headers };
  }
}

/**
 * Walks the pages as a person would: the authorization URL shows the
 * sign-in form, signing in leads back to it and shows the consent page,
 * and the decision redirects to the client. Returns that redirect.
 */
export async function signInAndDecide(browser: FormBrowser, authorizeUrl: string, who: { email: string; password: string }, decision: 'allow' | 'deny' = 'allow') {
  const signInPage = await browser.open(authorizeUrl);
  if (signInPage.status !== 200) throw new Error(`authorize page: ${signInPage.status} ${signInPage.location ?? signInPage.html.slice(0, 500)}`);
  const signedIn = await browser.open('/oauth/sign-in', { ...formFields(signInPage.html, '/oauth/sign-in'), email: who.email, password: who.password });
  if (signedIn.status !== 303) throw new Error(`sign-in: ${signedIn.status} ${signedIn.html.slice(0, 500)}`);
  return decide(browser, signedIn.location!, decision);
}

/** With a browser session: open the consent page and press a button. */
export async function decide(browser: FormBrowser, authorizeUrl: string, decision: 'allow' | 'deny' = 'allow') {
  const consent = await browser.open(authorizeUrl);
  if (consent.status !== 200) throw new Error(`consent page: ${consent.status} ${consent.location ?? consent.html.slice(0, 500)}`);
  const done = await browser.open('/oauth/authorize', { ...formFields(consent.html, '/oauth/authorize'), decision });
  if (done.status !== 303 || !done.location) throw new Error(`decision: ${done.status} ${done.html.slice(0, 500)}`);
  return { location: new URL(done.location), consentHtml: consent.html };
}

export async function pkcePair() {
  const verifier = oidc.randomPKCECodeVerifier();
  return { verifier, challenge: await oidc.calculatePKCECodeChallenge(verifier) };
}
