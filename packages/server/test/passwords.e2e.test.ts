/**
 * Passwords and sign-up modes (issue 26, CONTRACT §12.5): change (other sessions end, this one stays),
 * reset by an emailed link through a real SMTP server (single use, expiry, hashed at rest, the same 202
 * and timing for unknown addresses, throttled), mail that cannot be sent changes no answer and leaks
 * nothing to the log, and CODELOOM_SIGNUP as a table.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL, nextIp, startTestServer, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { startSmtpSink, type SmtpSink } from './helpers/smtp-sink.js';
import { sha256 } from '../src/identity/secrets.js';

if (!TEST_DATABASE_URL) console.log('skipping the PostgreSQL password test: it needs TEST_DATABASE_URL');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const NEW_PASSWORD = 'a brand new passphrase';

type LogCall = { level: 'info' | 'warn'; object: Record<string, unknown>; message: string };
function spyOnMailLog(server: TestServer): LogCall[] {
  const calls: LogCall[] = [];
  server.server.ctx.mail.attachLogger({
    info: (object, message) => calls.push({ level: 'info', object, message }),
    warn: (object, message) => calls.push({ level: 'warn', object, message }),
  });
  return calls;
}

const login = (base: string, email: string, password: string) =>
  request(`${base}/api/v1/auth/login`, { body: { email, password }, headers: { 'x-forwarded-for': nextIp() } });
const verify = (base: string, token: string) => request(`${base}/api/v1/auth/verify`, { token });
const refresh = (base: string, refreshToken: string) => request(`${base}/api/v1/auth/refresh`, { body: { refresh_token: refreshToken } });
const askReset = (base: string, email: string, ip = nextIp()) =>
  request(`${base}/api/v1/auth/password-reset`, { body: { email }, headers: { 'x-forwarded-for': ip } });
const confirmReset = (base: string, token: string, password = NEW_PASSWORD) =>
  request(`${base}/api/v1/auth/password-reset/confirm`, { body: { token, new_password: password }, headers: { 'x-forwarded-for': nextIp() } });

/** The link of a reset mail (the same in its text and its HTML) and the token in its fragment. */
function linkOf(mail: { text: string; html: string }) {
  const link = /https?:\/\/\S+\/dashboard\/reset-password#token=(clpr_[A-Za-z0-9_-]+)/.exec(mail.text);
  expect(link, mail.text).not.toBeNull();
  expect(mail.html).toContain(`href="${link![0]}"`);
  return { link: link![0], token: link![1]! };
}

describe('passwords', () => {
  let smtp: SmtpSink;
  let server: TestServer;
  let base: string;

  beforeAll(async () => {
    // The mail server takes 300 ms to accept each message: a reset request that waited for its mail would show.
    smtp = await startSmtpSink({ delayMs: 300, refuse: (a) => a.startsWith('bounce') });
    server = await startTestServer({ env: { CODELOOM_SMTP_URL: smtp.smtpUrl, CODELOOM_MAIL_FROM: 'Codeloom Test <codeloom@codeloom.test>', CODELOOM_LOGIN_MAX_FAILURES: '50', CODELOOM_LOGIN_MAX_FAILURES_PER_IP: '1000' } });
    base = server.url;
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
  });

  describe('change', () => {
    it('keeps the calling session, ends every other one (access and refresh tokens), and the new password signs in', async () => {
      const u = await registerUser(base, { ip: nextIp() });
      const other = (await login(base, u.email, u.password)).body;
      const third = (await login(base, u.email, u.password)).body;
      expect((await verify(base, other.token)).status).toBe(200);

      const res = await request(`${base}/api/v1/auth/password`, { token: u.token, body: { current_password: u.password, new_password: NEW_PASSWORD }, headers: { 'x-forwarded-for': nextIp() } });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({ success: true });

      expect((await verify(base, u.token)).status).toBe(200);
      for (const s of [other, third]) {
        const refused = await verify(base, s.token);
        expect(refused.status).toBe(401);
        expect(refused.body.code).toBe('invalid_token');
        expect((await refresh(base, s.refreshToken)).status).toBe(401);
      }
      // The calling session goes on: its refresh token still trades.
      expect((await refresh(base, u.refreshToken)).status).toBe(200);
      expect((await login(base, u.email, u.password)).body.code).toBe('invalid_credentials');
      expect((await login(base, u.email, NEW_PASSWORD)).status).toBe(200);
    });

    it('refuses a wrong current password (401 invalid_credentials), a short new one (400), and anything but a session (403)', async () => {
      const u = await registerUser(base, { ip: nextIp() });
      const wrong = await request(`${base}/api/v1/auth/password`, { token: u.token, body: { current_password: 'not my password', new_password: NEW_PASSWORD } });
      expect(wrong.status).toBe(401);
      expect(wrong.body.code).toBe('invalid_credentials');
      const short = await request(`${base}/api/v1/auth/password`, { token: u.token, body: { current_password: u.password, new_password: 'short' } });
      expect(short.status).toBe(400);
      expect(short.body.code).toBe('validation_failed');
      expect(short.body.errors.map((e: { path: string }) => e.path)).toContain('/new_password');
      expect((await request(`${base}/api/v1/auth/password`, { body: { current_password: u.password, new_password: NEW_PASSWORD } })).status).toBe(401);
      const key = await request(`${base}/api/v1/api-keys`, { token: u.token, body: { name: 'k' } });
      const byKey = await request(`${base}/api/v1/auth/password`, { token: key.body.key, body: { current_password: u.password, new_password: NEW_PASSWORD } });
      expect(byKey.status).toBe(403);
      // Nothing changed.
      expect((await login(base, u.email, u.password)).status).toBe(200);
    });
  });

  describe('reset by email', () => {
    it('mails a working link; the token is stored only as its SHA-256, works once and ends every session', async () => {
      const u = await registerUser(base, { ip: nextIp() });
      const mark = smtp.mails.length;
      const res = await askReset(base, `  ${u.email.toUpperCase()} `);
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ accepted: true, detail: expect.stringContaining('If an account uses this address') });
      const mail = await smtp.waitFor(u.email, 5_000, mark);
      expect(mail.from).toBe('"Codeloom Test" <codeloom@codeloom.test>');
      expect(mail.to).toEqual([u.email]);
      expect(mail.subject).toBe('Reset your Codeloom password');
      expect(mail.text).toContain('30 minutes');
      const { link, token } = linkOf(mail);
      expect(link.startsWith('http://codeloom.test/dashboard/reset-password#token=')).toBe(true);

      const rows = await server.server.ctx.store.handle.db.selectFrom('password_resets').selectAll().where('user_id', '=', u.user.id).execute();
      expect(rows).toHaveLength(1);
      expect(rows[0]!.token_hash).toBe(sha256(token));
      expect(JSON.stringify(rows)).not.toContain(token);

      const done = await confirmReset(base, token);
      expect(done.status, done.text).toBe(200);
      expect(done.body).toEqual({ success: true });
      expect((await verify(base, u.token)).status).toBe(401);
      expect((await refresh(base, u.refreshToken)).status).toBe(401);
      expect((await login(base, u.email, u.password)).status).toBe(401);
      expect((await login(base, u.email, NEW_PASSWORD)).status).toBe(200);

      const again = await confirmReset(base, token, 'yet another passphrase');
      expect(again.status).toBe(400);
      expect(again.body.code).toBe('invalid_reset_token');
      expect((await login(base, u.email, NEW_PASSWORD)).status).toBe(200);
    });

    it('refuses an unknown or malformed token (400 invalid_reset_token) and a short password (400 validation_failed)', async () => {
      for (const token of ['clpr_nope', 'whatever']) {
        const res = await confirmReset(base, token);
        expect(res.status).toBe(400);
        expect(res.body.code).toBe('invalid_reset_token');
        expect(res.headers.get('content-type')).toContain('application/problem+json');
      }
      const short = await confirmReset(base, 'clpr_nope', 'short');
      expect(short.body.code).toBe('validation_failed');
    });

    it('a newer link and the one used: redeeming one uses up the others of the account', async () => {
      const u = await registerUser(base, { ip: nextIp() });
      let mark = smtp.mails.length;
      await askReset(base, u.email);
      const first = linkOf(await smtp.waitFor(u.email, 5_000, mark)).token;
      mark = smtp.mails.length;
      await askReset(base, u.email);
      const second = linkOf(await smtp.waitFor(u.email, 5_000, mark)).token;
      expect(second).not.toBe(first);
      expect((await confirmReset(base, second)).status).toBe(200);
      expect((await confirmReset(base, first, 'yet another passphrase')).body.code).toBe('invalid_reset_token');
    });

    it('answers an unknown address exactly as a known one, as fast, and mails nothing', async () => {
      const u = await registerUser(base, { ip: nextIp() });
      const unknown = `nobody-${Date.now()}@example.com`;
      const timed = async (email: string) => {
        const started = performance.now();
        const res = await askReset(base, email);
        return { res, ms: performance.now() - started };
      };
      const mark = smtp.mails.length;
      const known: number[] = [];
      const nobody: number[] = [];
      for (let i = 0; i < 5; i++) {
        const k = await timed(u.email);
        const n = await timed(unknown);
        expect(n.res.status).toBe(k.res.status);
        expect(n.res.text).toBe(k.res.text);
        expect(n.res.headers.get('content-type')).toBe(k.res.headers.get('content-type'));
        known.push(k.ms);
        nobody.push(n.ms);
      }
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[2]!;
      // The mail server takes 300 ms per message: had the known address waited for its mail, it would be that much slower.
      expect(median(known)).toBeLessThan(median(nobody) + 150);
      await smtp.waitFor(u.email, 5_000, mark);
      await sleep(1_000);
      expect(smtp.mails.slice(mark).every((m) => m.rcpt.includes(u.email))).toBe(true);
      expect(smtp.mails.slice(mark).some((m) => m.rcpt.includes(unknown))).toBe(false);
    });

    it('a mail server that refuses the message changes nothing in the answer, and the log has neither the address nor the token', async () => {
      const calls = spyOnMailLog(server);
      const u = await registerUser(base, { ip: nextIp(), email: `bounce-${Date.now()}@example.com` });
      const res = await askReset(base, u.email);
      expect(res.status).toBe(202);
      for (let i = 0; i < 50 && !calls.some((c) => c.level === 'warn'); i++) await sleep(100);
      const warn = calls.find((c) => c.level === 'warn');
      expect(warn, JSON.stringify(calls)).toMatchObject({ message: 'mail not sent', object: { mail: 'password_reset', to: 'b***@example.com', response_code: 550 } });
      const logged = JSON.stringify(calls);
      expect(logged).not.toContain(u.email);
      expect(logged).not.toContain('clpr_');
      expect(logged).toContain('b***@example.com');
    });
  });
});

describe('password reset: expiry and throttling', () => {
  let smtp: SmtpSink;
  let server: TestServer;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    server = await startTestServer({ env: { CODELOOM_SMTP_URL: smtp.smtpUrl, CODELOOM_PASSWORD_RESET_TTL: '1', CODELOOM_LOGIN_MAX_FAILURES: '3', CODELOOM_LOGIN_MAX_FAILURES_PER_IP: '5' } });
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
  });

  it('a link past CODELOOM_PASSWORD_RESET_TTL is refused (400 invalid_reset_token) and the password stays', async () => {
    const u = await registerUser(server.url, { ip: nextIp() });
    const mark = smtp.mails.length;
    expect((await askReset(server.url, u.email)).status).toBe(202);
    const mail = await smtp.waitFor(u.email, 5_000, mark);
    expect(mail.text).toContain('1 second');
    const { token } = linkOf(mail);
    await sleep(1_500);
    const res = await confirmReset(server.url, token);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_reset_token');
    expect((await login(server.url, u.email, u.password)).status).toBe(200);
  });

  it('is throttled per email (from any address) and per client address (whatever the email), known or not: 429 with Retry-After', async () => {
    const u = await registerUser(server.url, { ip: nextIp() });
    for (const email of [u.email, `nobody-${Date.now()}@example.com`]) {
      for (let i = 0; i < 3; i++) expect((await askReset(server.url, email)).status).toBe(202);
      const refused = await askReset(server.url, email);
      expect(refused.status).toBe(429);
      expect(refused.body.code).toBe('rate_limited');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    const ip = nextIp();
    for (let i = 0; i < 5; i++) expect((await askReset(server.url, `someone${i}-${Date.now()}@example.com`, ip)).status).toBe(202);
    const refused = await askReset(server.url, `someone-else-${Date.now()}@example.com`, ip);
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('rate_limited');
  });
});

describe('password reset without a mail server', () => {
  it('is still accepted (202) and logs at info that no mail was sent, without the token', async () => {
    const server = await startTestServer();
    try {
      const calls = spyOnMailLog(server);
      const u = await registerUser(server.url, { ip: nextIp() });
      const res = await askReset(server.url, u.email);
      expect(res.status).toBe(202);
      for (let i = 0; i < 30 && !calls.length; i++) await sleep(50);
      expect(calls).toEqual([{ level: 'info', object: { mail: 'password_reset' }, message: expect.stringContaining('no mail sent: CODELOOM_SMTP_URL is not set') }]);
      expect(await server.server.ctx.store.handle.db.selectFrom('password_resets').selectAll().execute()).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

describe('sign-up modes (CODELOOM_SIGNUP)', () => {
  const register = (base: string, email: string) =>
    request(`${base}/api/v1/auth/register`, { body: { email, password: 'correct horse battery', name: 'N' }, headers: { 'x-forwarded-for': nextIp() } });

  const cases: Array<{ mode: string; env: Record<string, string>; email: string; allowed: boolean; detail?: RegExp }> = [
    { mode: 'open', env: {}, email: 'anyone@example.org', allowed: true },
    { mode: 'closed', env: { CODELOOM_SIGNUP: 'closed' }, email: 'anyone@example.org', allowed: false, detail: /closed.*CODELOOM_SIGNUP=closed/ },
    { mode: 'invite', env: { CODELOOM_SIGNUP: 'invite' }, email: 'anyone@example.org', allowed: false, detail: /invitation only.*CODELOOM_SIGNUP=invite/ },
    { mode: 'domains (allowed, any case)', env: { CODELOOM_SIGNUP: 'domains', CODELOOM_SIGNUP_DOMAINS: 'Example.COM, corp.test' }, email: 'Someone@EXAMPLE.com', allowed: true },
    { mode: 'domains (second domain)', env: { CODELOOM_SIGNUP: 'domains', CODELOOM_SIGNUP_DOMAINS: 'example.com,corp.test' }, email: 'a@corp.test', allowed: true },
    { mode: 'domains (refused)', env: { CODELOOM_SIGNUP: 'domains', CODELOOM_SIGNUP_DOMAINS: 'example.com' }, email: 'a@example.org', allowed: false, detail: /allowed domains.*CODELOOM_SIGNUP=domains/ },
    { mode: 'domains (a subdomain is not the domain)', env: { CODELOOM_SIGNUP: 'domains', CODELOOM_SIGNUP_DOMAINS: 'example.com' }, email: 'a@evil.example.com', allowed: false, detail: /CODELOOM_SIGNUP=domains/ },
  ];

  it.each(cases)('$mode: the first account is always allowed; then $email → allowed: $allowed', async ({ env, email, allowed, detail }) => {
    const server = await startTestServer({ env });
    try {
      // The first account of an empty database, whatever the mode (even at a refused domain).
      const first = await register(server.url, 'first-admin@setup.invalid');
      expect(first.status, first.text).toBe(201);
      const res = await register(server.url, email);
      if (allowed) {
        expect(res.status, res.text).toBe(201);
      } else {
        expect(res.status).toBe(403);
        expect(res.body).toMatchObject({ code: 'signup_closed', status: 403, type: '/docs/errors#signup_closed' });
        expect(res.body.detail).toMatch(detail!);
        // Sign-in of existing accounts goes on.
        expect((await login(server.url, 'first-admin@setup.invalid', 'correct horse battery')).status).toBe(200);
      }
    } finally {
      await server.close();
    }
  });

  it('CODELOOM_SIGNUP=domains without CODELOOM_SIGNUP_DOMAINS stops the server at start', async () => {
    await expect(startTestServer({ env: { CODELOOM_SIGNUP: 'domains' } })).rejects.toThrow(/CODELOOM_SIGNUP_DOMAINS/);
  });
});

describe.skipIf(!TEST_DATABASE_URL)('passwords on PostgreSQL', () => {
  it('change, then reset by mail: single use, every session ended, the token stored as its SHA-256', async () => {
    const smtp = await startSmtpSink();
    const server = await startTestServer({ dialect: 'postgres', env: { CODELOOM_SMTP_URL: smtp.smtpUrl } });
    try {
      const base = server.url;
      const u = await registerUser(base, { ip: nextIp() });
      const other = (await login(base, u.email, u.password)).body;
      expect((await request(`${base}/api/v1/auth/password`, { token: u.token, body: { current_password: u.password, new_password: NEW_PASSWORD } })).status).toBe(200);
      expect((await verify(base, other.token)).status).toBe(401);
      expect((await verify(base, u.token)).status).toBe(200);

      expect((await askReset(base, u.email)).status).toBe(202);
      const { token } = linkOf(await smtp.waitFor(u.email));
      const rows = await server.server.ctx.store.handle.db.selectFrom('password_resets').select('token_hash').where('user_id', '=', u.user.id).execute();
      expect(rows).toEqual([{ token_hash: sha256(token) }]);
      expect((await confirmReset(base, token, 'reset on postgres')).status).toBe(200);
      expect((await verify(base, u.token)).status).toBe(401);
      expect((await confirmReset(base, token, 'reset on postgres again')).body.code).toBe('invalid_reset_token');
      expect((await login(base, u.email, 'reset on postgres')).status).toBe(200);
    } finally {
      await server.close();
      await smtp.close();
    }
  });
});
