import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type CodeloomApp } from '../src/app.js';
import { loadConfig } from '../src/config/load-config.js';
import { SecretCipher } from '../src/identity/secret-cipher.js';
import { startOpenAIFake, type FakeVendor } from './fakes/openai-fake.js';
import { registerUser, request } from './helpers/http.js';

/**
 * Rotating CODELOOM_SECRET_KEY (docs/models.md, "The API key at rest"): one SQLite file, three server lives.
 * Sealed under the old key; a server with only a new key skips the deployment (its key cannot be opened) and
 * says why once; with the old key in CODELOOM_SECRET_KEYS_PREVIOUS it serves again and the stored key is sealed
 * under the new one, so the old key can then be dropped.
 */
describe('deployment keys across a CODELOOM_SECRET_KEY rotation', () => {
  const SECRET = 'sk-rotate-SECRET-0c4d';
  let fake: FakeVendor;
  let file: string;
  let dataDir: string;
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.message);

  const start = async (env: Record<string, string>): Promise<{ app: CodeloomApp; url: string }> => {
    const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent', CODELOOM_ARGON2_MEMORY_KIB: '1024', CODELOOM_TRUST_PROXY: 'true', CODELOOM_ISSUER: 'http://codeloom.test', CODELOOM_DATA_DIR: dataDir, ...env });
    const app = await buildApp(config, { database: { sqliteFile: file } });
    return { app, url: await app.app.listen({ host: '127.0.0.1', port: 0 }) };
  };
  const chat = (url: string, token: string) => request(`${url}/openai/v1/chat/completions`, { token, body: { model: 'rotated', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 } });
  const login = async (url: string, u: { email: string; password: string }) => (await request(`${url}/api/v1/auth/login`, { body: { email: u.email, password: u.password }, headers: { 'x-forwarded-for': '10.27.0.1' } })).body.token as string;

  beforeAll(async () => {
    fake = await startOpenAIFake({ record: true, script: { requireApiKey: SECRET } });
    dataDir = mkdtempSync(join(tmpdir(), 'codeloom-rotate-'));
    file = join(dataDir, 'codeloom.db');
    process.on('warning', onWarning);
  });
  afterAll(async () => {
    process.off('warning', onWarning);
    await fake?.close();
  });

  it('old key → new key alone (skipped, said once) → new key with the old as previous (served, sealed again)', async () => {
    const first = await start({ CODELOOM_SECRET_KEY: 'old-key' });
    const admin = await registerUser(first.url, { ip: '10.27.0.1' });
    const created = await request(`${first.url}/api/v1/admin/deployments`, { token: admin.token, body: { name: 'rotating', provider: 'openai', base_url: `${fake.url}/v1`, api_key: SECRET, models: [{ id: 'rotated', price: { input: 0, output: 0 } }] } });
    expect(created.status, created.text).toBe(201);
    expect((await chat(first.url, admin.token)).status).toBe(200);
    const sealedOld = (await first.app.ctx.store.deployments.find(created.body.id))!.apiKeyEnc!;
    expect(sealedOld.split('.')[1]).toBe(new SecretCipher('old-key').currentId);
    await first.app.close();

    const second = await start({ CODELOOM_SECRET_KEY: 'new-key' });
    const token2 = await login(second.url, admin);
    expect((await chat(second.url, token2)).status).toBe(404); // skipped: not served
    expect(warnings.filter((w) => w.includes(created.body.id) && w.includes('cannot be decrypted'))).toHaveLength(1);
    expect((await request(`${second.url}/api/v1/admin/deployments/${created.body.id}`, { token: token2 })).body.has_api_key).toBe(true);
    await second.app.close();

    const third = await start({ CODELOOM_SECRET_KEY: 'new-key', CODELOOM_SECRET_KEYS_PREVIOUS: 'old-key' });
    const token3 = await login(third.url, admin);
    expect((await chat(third.url, token3)).status).toBe(200);
    expect(fake.requests.at(-1)!.headers.authorization).toBe(`Bearer ${SECRET}`);
    const sealedNew = (await third.app.ctx.store.deployments.find(created.body.id))!.apiKeyEnc!;
    expect(sealedNew.split('.')[1]).toBe(new SecretCipher('new-key').currentId);
    await third.app.close();

    // The old key can go now.
    const fourth = await start({ CODELOOM_SECRET_KEY: 'new-key' });
    expect((await chat(fourth.url, await login(fourth.url, admin))).status).toBe(200);
    await fourth.app.close();
  });
});
