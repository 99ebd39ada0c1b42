/**
 * The spec's names as written (issue 16): the snippet in fixtures/spec-example.mjs
 * runs in a child process against a real server, importing '@codeloom/client'
 * as a user would (the workspace link to the built package). The server's
 * default model is an OpenAI-compatible fake, so only the constructor's
 * `environment: 'sandbox'` can make a generation say `sandbox`.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIFake } from '../../server/test/fakes/openai-fake.js';
import type { FakeVendor } from '../../server/test/fakes/fake-vendor.js';
import { CodeGenClient, Codeloom } from '../src/index.js';
import { newUser, startTestServer, type TestServer } from './helpers.js';

const exec = promisify(execFile);
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const DIST = fileURLToPath(new URL('../dist/index.js', import.meta.url));

describe('the spec\'s SDK names: CodeGenClient, authenticate(), one options object', () => {
  let t: TestServer;
  let fake: FakeVendor;
  beforeAll(async () => {
    if (!existsSync(DIST)) throw new Error('build first: npm run build');
    fake = await startOpenAIFake({ script: { reply: 'Done.\n\n```typescript src/index.ts\nexport const x = 1;\n```\n' } });
    t = await startTestServer({ env: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-test', CODELOOM_OPENAI_MODELS: 'gpt-test', CODELOOM_DEFAULT_MODEL: 'gpt-test' } });
  });
  afterAll(async () => { await t?.close(); await fake?.close(); });

  it('the spec example runs verbatim in plain JavaScript and reaches the sandbox', async () => {
    const { client, email } = await newUser(t);
    const key = await client.apiKeys.create({ name: 'spec example' }); // a production key: only the option makes it sandbox
    expect(key.key).toMatch(/^cl_live_/);
    const { stdout } = await exec(process.execPath, [fixture('spec-example.mjs')], {
      env: { ...process.env, CODELOOM_API_KEY: key.key, CODELOOM_BASE_URL: t.url }, timeout: 20_000,
    });
    const [identity, result] = stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(identity).toEqual({ email, organization: expect.any(String), plan: 'free', environment: 'sandbox' });
    expect(result).toMatchObject({ id: expect.stringMatching(/^gen_/), model: 'sandbox', language: 'typescript' });
    expect(result.files.length).toBeGreaterThan(0);
    // The context arrived as sent (the history keeps the request).
    const stored = await client.withOptions({ environment: 'sandbox' }).generations.get(result.id);
    expect(stored.model).toBe('sandbox');
  });

  it('an unknown option or an invalid environment throws at construction, in plain JavaScript too', async () => {
    const { stdout } = await exec(process.execPath, [fixture('constructor-checks.mjs')], { timeout: 20_000 });
    const out = JSON.parse(stdout);
    expect(out.unknownOption).toMatch(/^TypeError: Unknown option "enviroment"/);
    expect(out.invalidEnvironment).toMatch(/^TypeError: environment must be "production" or "sandbox"/);
    expect(out.unknownCredential).toMatch(/^TypeError: Unknown credential "apikey"/);
    expect(out.unknownSecondArgOption).toMatch(/^TypeError: Unknown option "baseurl"/);
    expect(out.badBaseUrl).toMatch(/^TypeError: baseURL must be an http\(s\) URL/);
    expect(out.badRetries).toMatch(/^TypeError: maxRetries/);
    expect(out.oneObjectEnvironment).toBe('sandbox'); // Codeloom takes the one object too: nothing lands in production silently
    expect(out.oneObjectBaseURL).toBe('http://127.0.0.1:1');
  });

  it('reads CODELOOM_API_KEY and CODELOOM_BASE_URL when they are not given; null starts signed out', async () => {
    const { client, email } = await newUser(t);
    const key = await client.apiKeys.create({ name: 'env' });
    const saved = { key: process.env.CODELOOM_API_KEY, url: process.env.CODELOOM_BASE_URL };
    process.env.CODELOOM_API_KEY = key.key;
    process.env.CODELOOM_BASE_URL = t.url;
    try {
      const fromEnv = new CodeGenClient({ maxRetries: 0 });
      expect(fromEnv.baseUrl).toBe(t.url);
      const identity = await fromEnv.authenticate();
      expect(identity.user.email).toBe(email);
      expect(identity.credential.type).toBe('api_key');
      // baseURL (the OpenAI spelling) wins over the variable.
      expect(new CodeGenClient({ baseURL: 'http://127.0.0.1:9/' }).baseUrl).toBe('http://127.0.0.1:9');
      // Explicitly signed out: the variable is not used.
      const anonymous = new Codeloom(null, { maxRetries: 0 });
      expect(await anonymous.authenticate().catch((e: unknown) => e)).toMatchObject({ status: 401, code: 'unauthorized' });
      expect(await new CodeGenClient({ apiKey: null, maxRetries: 0 }).authenticate().catch((e: unknown) => e)).toMatchObject({ status: 401 });
    } finally {
      if (saved.key === undefined) delete process.env.CODELOOM_API_KEY; else process.env.CODELOOM_API_KEY = saved.key;
      if (saved.url === undefined) delete process.env.CODELOOM_BASE_URL; else process.env.CODELOOM_BASE_URL = saved.url;
    }
  });

  it('generate takes the spec\'s context keys and other string, number and boolean keys', async () => {
    const { client } = await newUser(t);
    const sandbox = client.withOptions({ environment: 'sandbox' });
    const result = await sandbox.generate({
      prompt: 'todo API', language: 'typescript',
      context: { framework: 'fastify', styling: 'none', includeTests: true, database: 'sqlite', apiVersion: 3, strict: false, notes: 'keep it small' },
    });
    expect(result.model).toBe('sandbox');
    // A value of another type is refused by the server, with the field named.
    const bad = await sandbox.generate({ prompt: 'x', context: { nested: { a: 1 } as never } }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ status: 400, code: 'validation_failed' });
  });
});
