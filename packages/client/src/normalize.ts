import { lookupTable, type GeneratedFile } from '@codeloom/protocol';
import { CodeloomError } from './errors.js';
import type { AuthSession, AuthUser, GenerationResult, Page } from './types.js';

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : undefined);

/** Accepts both auth response shapes of the spec (and the server's, which carries both) and presents one. */
export function normalizeAuth(raw: unknown): AuthSession {
  const r = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  const accessToken = str(r.access_token) ?? str(r.token) ?? str(r.accessToken);
  if (!accessToken) throw CodeloomError.client('invalid_response', 'The auth response carries no access token (token or access_token).');
  const expiresIn = num(r.expires_in) ?? num(r.expiresIn);
  const u = r.user && typeof r.user === 'object' ? (r.user as Record<string, unknown>) : undefined;
  const user: AuthUser | undefined = u
    ? { ...u, id: String(u.id), email: String(u.email ?? ''), name: String(u.name ?? ''), ...(typeof u.plan === 'string' ? { plan: u.plan } : {}) }
    : undefined;
  return {
    accessToken,
    refreshToken: str(r.refresh_token) ?? str(r.refreshToken),
    expiresIn,
    expiresAt: expiresIn === undefined ? undefined : Date.now() + expiresIn * 1000,
    tokenType: str(r.token_type) ?? 'Bearer',
    user,
  };
}

const MAIN_FILE = lookupTable<string>({
  typescript: 'main.ts', javascript: 'main.js', python: 'main.py', java: 'Main.java', go: 'main.go', rust: 'main.rs',
  c: 'main.c', cpp: 'main.cpp', csharp: 'Program.cs', ruby: 'main.rb', php: 'main.php', kotlin: 'Main.kt',
  swift: 'main.swift', bash: 'main.sh', sql: 'main.sql', html: 'index.html',
});

/** The file name used when a result has `code` but no `files`. */
export function defaultFileName(language: string | undefined): string {
  return (language && MAIN_FILE[language.toLowerCase()]) || 'main.txt';
}

/** Presents a generation result with a `files` array (derived from `code` when the server sent none) and an `output`. */
export function normalizeGeneration(raw: unknown): GenerationResult {
  const r = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  const code = typeof r.code === 'string' ? r.code : '';
  const language = typeof r.language === 'string' ? r.language : '';
  const given = Array.isArray(r.files)
    ? (r.files as unknown[]).filter((f): f is GeneratedFile => !!f && typeof (f as GeneratedFile).path === 'string' && typeof (f as GeneratedFile).content === 'string')
    : [];
  const files = given.length > 0 ? given : code ? [{ path: defaultFileName(language), content: code }] : [];
  return {
    ...(r as object),
    id: String(r.id ?? ''),
    code,
    language,
    model: typeof r.model === 'string' ? r.model : '',
    tokens_used: num(r.tokens_used) ?? 0,
    processing_time: typeof r.processing_time === 'number' ? r.processing_time : 0,
    files,
    output: typeof r.output === 'string' ? r.output : code,
  } as GenerationResult;
}

export function mapPage<T, U>(page: Page<T>, fn: (item: T) => U): Page<U> {
  return { ...page, data: page.data.map(fn) };
}
