/**
 * The one unit test with a fake fetch: the spec's two auth response shapes
 * (A camelCase, B snake_case) and a server that omits `files`, which the
 * real server never sends.
 */
import { describe, expect, it } from 'vitest';
import { ERROR_CODES as PROTOCOL_ERROR_CODES } from '@codeloom/protocol';
import { CLIENT_ERROR_CODES, Codeloom, CodeloomError, ERROR_CODES, type FetchLike, type TokenPair } from '../src/index.js';
import { retryDelayMs } from '../src/transport.js';

function fakeFetch(routes: Record<string, unknown>) {
  const calls: Array<{ url: string; method: string; headers: Record<string, string>; body: unknown }> = [];
  const fetch: FetchLike = async (url, init) => {
    const path = new URL(url).pathname;
    calls.push({ url, method: init.method ?? 'GET', headers: init.headers as Record<string, string>, body: init.body ? JSON.parse(String(init.body)) : undefined });
    if (!(path in routes)) return new Response(JSON.stringify({ status: 404, code: 'not_found', detail: 'nope', request_id: 'req_fake' }), { status: 404, headers: { 'content-type': 'application/problem+json' } });
    return new Response(JSON.stringify(routes[path]), { status: 200, headers: { 'content-type': 'application/json' } });
  };
  return { fetch, calls };
}

const SHAPE_A = { token: 'jwt-a', refreshToken: 'rt-a', expiresIn: 900, user: { id: 'usr_1', email: 'a@b.c', name: 'Ada' } };
const SHAPE_B = { access_token: 'jwt-b', refresh_token: 'rt-b', expires_in: 600, user: { id: 42, email: 'b@b.c', name: 'Bob', plan: 'pro' } };

describe('auth response shapes', () => {
  it('accepts shape A (token, refreshToken, expiresIn) and adopts the tokens', async () => {
    const { fetch, calls } = fakeFetch({ '/api/v1/auth/login': SHAPE_A, '/api/v1/user/profile': { id: 'usr_1' } });
    const seen: TokenPair[] = [];
    const client = new Codeloom(null, { baseUrl: 'http://codeloom.test', fetch, onTokens: (t) => { seen.push(t); } });
    const session = await client.auth.login({ email: 'a@b.c', password: 'x'.repeat(8) });
    expect(session).toMatchObject({ accessToken: 'jwt-a', refreshToken: 'rt-a', expiresIn: 900, tokenType: 'Bearer', user: { id: 'usr_1', email: 'a@b.c', name: 'Ada' } });
    expect(session.expiresAt).toBeGreaterThan(Date.now() + 899_000);
    expect(seen).toEqual([{ accessToken: 'jwt-a', refreshToken: 'rt-a' }]);
    expect(calls[0]!.headers.authorization).toBeUndefined();
    await client.user.profile();
    expect(calls[1]!.headers.authorization).toBe('Bearer jwt-a');
  });

  it('accepts shape B (access_token, refresh_token, expires_in, integer user id)', async () => {
    const { fetch, calls } = fakeFetch({ '/api/v1/auth/login': SHAPE_B, '/api/v1/auth/verify': { valid: true } });
    const client = new Codeloom(undefined, { baseUrl: 'http://codeloom.test/', fetch });
    const session = await client.auth.login({ email: 'b@b.c', password: 'x'.repeat(8) });
    expect(session).toMatchObject({ accessToken: 'jwt-b', refreshToken: 'rt-b', expiresIn: 600, user: { id: '42', email: 'b@b.c', name: 'Bob', plan: 'pro' } });
    await client.verify();
    expect(calls[1]!.url).toBe('http://codeloom.test/api/v1/auth/verify');
    expect(calls[1]!.headers.authorization).toBe('Bearer jwt-b');
  });

  it('shape A register without refreshToken, then a shape B refresh: keeps and rotates the right tokens', async () => {
    const { token, user, expiresIn } = SHAPE_A;
    const { fetch, calls } = fakeFetch({ '/api/v1/auth/register': { token, user, expiresIn }, '/api/v1/auth/refresh': SHAPE_B });
    const seen: TokenPair[] = [];
    const client = new Codeloom({ accessToken: 'old', refreshToken: 'rt-old' }, { baseUrl: 'http://codeloom.test', fetch, onTokens: (t) => { seen.push(t); } });
    const reg = await client.auth.register({ email: 'a@b.c', password: 'x'.repeat(8), name: 'Ada' });
    expect(reg.refreshToken).toBeUndefined();
    expect(client.auth.tokens).toEqual({ accessToken: 'jwt-a', refreshToken: 'rt-old' });
    const refreshed = await client.auth.refresh();
    expect(calls[1]!.body).toEqual({ refresh_token: 'rt-old', refreshToken: 'rt-old' });
    expect(refreshed.accessToken).toBe('jwt-b');
    expect(client.auth.tokens).toEqual({ accessToken: 'jwt-b', refreshToken: 'rt-b' });
    expect(seen.at(-1)).toEqual({ accessToken: 'jwt-b', refreshToken: 'rt-b' });
  });

  it('a response with no access token is an invalid_response error', async () => {
    const { fetch } = fakeFetch({ '/api/v1/auth/login': { user: {} } });
    const client = new Codeloom(null, { baseUrl: 'http://codeloom.test', fetch });
    const error = await client.auth.login({ email: 'a@b.c', password: 'x'.repeat(8) }).catch((e: unknown) => e);
    expect(CodeloomError.isInstance(error)).toBe(true);
    expect((error as CodeloomError).code).toBe('invalid_response');
  });
});

describe('generation results', () => {
  it('derives files from code when the server omits them (spec §2.3 shape)', async () => {
    const bare = { id: 'gen_1', code: 'print("hi")\n', language: 'python', model: 'm', tokens_used: 3, processing_time: 0.01 };
    const { fetch, calls } = fakeFetch({ '/api/v1/generate': bare, '/api/v1/generations/gen_1': { ...bare, language: 'cobol' }, '/api/v1/generations/gen_3': { ...bare, id: 'gen_3', language: 'constructor' } });
    const client = new Codeloom({ apiKey: 'cl_live_x' }, { baseUrl: 'http://codeloom.test', fetch });
    const result = await client.generate({ prompt: 'hello', language: 'python' });
    expect(result.files).toEqual([{ path: 'main.py', content: 'print("hi")\n' }]);
    expect(result.output).toBe('print("hi")\n');
    expect(calls[0]!.body).toEqual({ prompt: 'hello', language: 'python' });
    expect((await client.generations.get('gen_1')).files).toEqual([{ path: 'main.txt', content: 'print("hi")\n' }]);
    expect((await client.generations.get('gen_3')).files).toEqual([{ path: 'main.txt', content: 'print("hi")\n' }]);
  });

  it('keeps the files a server sends', async () => {
    const full = { id: 'gen_2', code: 'a', language: 'typescript', model: 'm', tokens_used: 1, processing_time: 0, files: [{ path: 'src/a.ts', content: 'a' }, { path: 'test/a.test.ts', content: 't' }], output: 'raw' };
    const { fetch } = fakeFetch({ '/api/v1/generate': full });
    const result = await new Codeloom({ apiKey: 'k' }, { baseUrl: 'http://codeloom.test', fetch }).generate({ prompt: 'x' });
    expect(result.files).toHaveLength(2);
    expect(result.output).toBe('raw');
  });
});

describe('errors and retry policy', () => {
  it('re-exports every registry code', () => {
    expect(ERROR_CODES).toBe(PROTOCOL_ERROR_CODES);
    expect(Object.keys(ERROR_CODES)).toContain('token_expired');
    for (const code of Object.keys(CLIENT_ERROR_CODES)) expect(ERROR_CODES).not.toHaveProperty(code);
  });

  it('isInstance recognises errors of another copy of the package by the Symbol.for brand', () => {
    const mine = new CodeloomError({ status: 404, code: 'not_found', detail: 'x' });
    expect(CodeloomError.isInstance(mine)).toBe(true);
    // What another copy of the class produces: a different prototype, the same global brand.
    class OtherCopy extends Error {}
    const foreign = Object.defineProperty(new OtherCopy('x'), Symbol.for('@codeloom/client.CodeloomError'), { value: true });
    expect(foreign instanceof CodeloomError).toBe(false);
    expect(CodeloomError.isInstance(foreign)).toBe(true);
    expect(CodeloomError.isInstance(new Error('x'))).toBe(false);
    expect(CodeloomError.isInstance(null)).toBe(false);
    expect(CodeloomError.isInstance({ code: 'not_found' })).toBe(false);
  });

  it('a problem document becomes status, code, detail, requestId', async () => {
    const { fetch } = fakeFetch({});
    const error = await new Codeloom({ apiKey: 'k' }, { baseUrl: 'http://codeloom.test', fetch }).projects.get('prj_x').catch((e: unknown) => e as CodeloomError);
    expect(error).toMatchObject({ status: 404, code: 'not_found', detail: 'nope', requestId: 'req_fake' });
  });

  it('backoff: at least Retry-After, else exponential, always with bounded jitter', () => {
    for (let i = 0; i < 50; i++) {
      const withHeader = retryDelayMs(0, 3);
      expect(withHeader).toBeGreaterThanOrEqual(3000);
      expect(withHeader).toBeLessThan(3250);
      const second = retryDelayMs(1, undefined);
      expect(second).toBeGreaterThanOrEqual(1000);
      expect(second).toBeLessThan(1500);
      expect(retryDelayMs(20, undefined)).toBeLessThan(31_000);
    }
  });
});
