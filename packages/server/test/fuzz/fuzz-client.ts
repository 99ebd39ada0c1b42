import http from 'node:http';
import { ERROR_CODES } from '@codeloom/protocol';
import type { FuzzRequest } from './openapi-requests.js';

export interface FuzzResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

export interface Account {
  token: string;
  key: string;
}

let ipCounter = 0;
/** Anonymous requests come from many addresses (the test server trusts X-Forwarded-For), so the fuzz is not all 429s. */
const nextAddress = () => { ipCounter += 1; return `172.${16 + ((ipCounter >> 16) & 15)}.${(ipCounter >> 8) & 255}.${ipCounter & 255}`; };

/** Sends one request exactly as generated (the URL is not re-encoded), on a keep-alive agent. */
export function send(base: URL, agent: http.Agent, req: FuzzRequest, account: Account): Promise<FuzzResponse> {
  const headers: Record<string, string> = { ...req.headers, 'x-forwarded-for': nextAddress() };
  if (req.credential === 'session') headers.authorization = `Bearer ${account.token}`;
  if (req.credential === 'key') headers.authorization = `Bearer ${account.key}`;
  if (req.credential === 'garbage' && req.garbage) headers.authorization = req.garbage;
  const body = req.body === undefined ? undefined : Buffer.from(req.body, 'utf8');
  if (body) headers['content-length'] = String(body.length);
  return new Promise((resolve, reject) => {
    const r = http.request({ host: base.hostname, port: base.port, method: req.method, path: req.url, headers, agent, timeout: 15_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    r.on('timeout', () => r.destroy(new Error('no answer within 15 s')));
    r.on('error', reject);
    r.end(body);
  });
}

const RFC6749_ROUTES = /^POST \/oauth\/(token|revoke|introspect)$/;
const HTML_ROUTES = /^GET \/oauth\/authorize$/;
/** The OpenAI-compatible surface answers OpenAI's error shape by contract (docs/openai.md). */
const OPENAI_ROUTES = /^[A-Z]+ \/openai\/v1\//;
/** The Anthropic-compatible routes answer errors in Anthropic's shape: {"type": "error", "error": {"type", "message"}}. */
const ANTHROPIC_ROUTES = /^[A-Z]+ \/anthropic\/v1\//;

/** What is wrong with this answer, or undefined. */
export function problemWith(req: FuzzRequest, res: FuzzResponse, secretsOfOthers: string[]): string | undefined {
  if (res.status >= 500) return `answered ${res.status}`;
  const requestId = res.headers['x-request-id'];
  if (typeof requestId !== 'string' || !requestId) return 'no X-Request-Id';
  if (req.credential === 'session' || req.credential === 'key') {
    const leaked = secretsOfOthers.find((s) => res.text.includes(s));
    if (leaked) return `names another account's resource ${leaked}`;
  }
  if (res.status < 400) return undefined;
  const type = String(res.headers['content-type'] ?? '');
  if (RFC6749_ROUTES.test(req.route) && !type.startsWith('application/problem+json')) {
    try {
      const body = JSON.parse(res.text);
      return typeof body.error === 'string' ? undefined : 'an RFC 6749 error without "error"';
    } catch { return 'an RFC 6749 error that is not JSON'; }
  }
  if (HTML_ROUTES.test(req.route) && type.startsWith('text/html')) return undefined;
  if (OPENAI_ROUTES.test(req.route)) {
    let body: any;
    try { body = JSON.parse(res.text); } catch { return 'an OpenAI-style error that is not JSON'; }
    const e = body?.error;
    if (typeof e?.message !== 'string' || typeof e?.type !== 'string' || !('param' in e) || !('code' in e)) return 'an OpenAI-style error without message, type, param and code';
    return undefined;
  }
  if (ANTHROPIC_ROUTES.test(req.route)) {
    let body: any;
    try { body = JSON.parse(res.text); } catch { return 'an Anthropic-style error that is not JSON'; }
    if (body?.type !== 'error' || typeof body?.error?.type !== 'string' || typeof body?.error?.message !== 'string') return 'an Anthropic-style error without type "error", error.type and error.message';
    return undefined;
  }
  if (!type.startsWith('application/problem+json')) return `an error with Content-Type ${type || '(none)'}`;
  let body: any;
  try { body = JSON.parse(res.text); } catch { return 'a problem document that is not JSON'; }
  const entry = (ERROR_CODES as Record<string, { status: number }>)[body?.code];
  if (!entry) return `unknown code ${JSON.stringify(body?.code)}`;
  if (entry.status !== res.status || body.status !== res.status) return `code ${body.code} with status ${res.status}`;
  if (body.request_id !== requestId) return 'request_id differs from X-Request-Id';
  if (typeof body.type !== 'string' || typeof body.title !== 'string' || typeof body.detail !== 'string') return 'a problem document without type, title or detail';
  return undefined;
}

export function describe(req: FuzzRequest, res: FuzzResponse | undefined, problem: string): string {
  const body = req.body === undefined ? '' : `\n  body (${req.headers['content-type'] ?? 'no type'}): ${JSON.stringify(req.body.slice(0, 400))}`;
  const answer = res ? `\n  answer ${res.status} ${String(res.headers['content-type'] ?? '')}: ${res.text.slice(0, 400)}` : '';
  return `${problem}\n  ${req.method} ${req.url.slice(0, 300)} as ${req.credential}${body}${answer}`;
}
