import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PasswordHasher } from '../src/modules/auth/password-hasher.js';
import { nextIp, startTestServer, type TestServer } from './helpers/test-server.js';
import { request } from './helpers/http.js';

/** Emails are compared after NFKC normalisation and lower-casing (docs/api.md). */
describe('email normalisation', () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer(); });
  afterAll(async () => { await t.close(); });

  const password = 'correct horse battery';
  const register = (email: string) => request(`${t.url}/api/v1/auth/register`, { body: { email, password, name: 'N' }, headers: { 'x-forwarded-for': nextIp() } });
  const login = (email: string, pw = password) => request(`${t.url}/api/v1/auth/login`, { body: { email, password: pw }, headers: { 'x-forwarded-for': nextIp() } });
  const tag = () => randomBytes(4).toString('hex');
  const fullwidth = (s: string) => [...s].map((c) => (c >= '!' && c <= '~' && c !== '@' && c !== '.' ? String.fromCodePoint(c.codePointAt(0)! + 0xfee0) : c)).join('');

  it('a fullwidth address is the same account as its ASCII form', async () => {
    const ascii = `a${tag()}@example.com`;
    const first = await register(ascii);
    expect(first.status, first.text).toBe(201);
    const twin = await register(fullwidth(ascii));
    expect(twin.status, twin.text).toBe(409);
    expect(twin.body.code).toBe('conflict');
    const viaFullwidth = await login(fullwidth(ascii));
    expect(viaFullwidth.status, viaFullwidth.text).toBe(200);
    expect(viaFullwidth.body.user.id).toBe(first.body.user.id);
  });

  it('the domain (and, as always, the local part) compare case-insensitively, and trimmed', async () => {
    const email = `Mixed.Case+tag${tag()}@Example.ORG`;
    const first = await register(email);
    expect(first.status).toBe(201);
    expect((await register(`  ${email.toLowerCase()}  `)).status).toBe(409);
    expect((await login(email.toUpperCase())).body.user?.id).toBe(first.body.user.id);
    // Dots and +tags are the mail provider's business: a different local part is a different account.
    expect((await register(email.replace('+tag', '+other'))).status).toBe(201);
  });

  it('an internationalised domain matches its punycode form', async () => {
    const local = `x${tag()}`;
    const first = await register(`${local}@bücher.example`);
    expect(first.status, first.text).toBe(201);
    expect((await register(`${local}@xn--bcher-kva.example`)).status).toBe(409);
    expect((await login(`${local}@BÜCHER.example`)).body.user?.id).toBe(first.body.user.id);
  });

  it('accounts stored before normalisation (under the old lower-cased form) keep working', async () => {
    const email = `ｂ${tag()}@example.com`;
    const hash = await new PasswordHasher(1024).hash(password);
    const legacy = await t.server.ctx.store.accounts.create({ email, emailNormalized: email.toLowerCase(), name: 'Old', passwordHash: hash, plan: 'free' });
    const res = await login(email);
    expect(res.status, res.text).toBe(200);
    expect(res.body.user.id).toBe(legacy.user.id);
    expect((await register(email)).status).toBe(409);
    expect((await login(email, 'wrong password!')).status).toBe(401);
  });
});
