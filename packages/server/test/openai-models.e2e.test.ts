/**
 * GET /openai/v1/models/{id} (CONTRACT §12.3) through the official `openai` SDK: one model in OpenAI's
 * format, a model id with a slash (vLLM's `org/model`) whether the client encodes it or not, and an unknown
 * id as OpenAI's 404 error object.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser } from './helpers/http.js';

describe('GET /openai/v1/models/{id}', () => {
  let fake: FakeVendor;
  let t: TestServer;
  let client: OpenAI;
  let token: string;
  beforeAll(async () => {
    fake = await startOpenAIFake();
    t = await startTestServer({ env: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-up', CODELOOM_OPENAI_MODELS: 'gpt-test,qwen/qwen2.5-coder-7b', CODELOOM_DEFAULT_MODEL: 'sandbox' } });
    token = (await registerUser(t.url, { ip: nextIp() })).token;
    client = new OpenAI({ apiKey: token, baseURL: `${t.url}/openai/v1`, maxRetries: 0 });
  });
  afterAll(async () => { await t?.close(); await fake?.close(); });

  it('retrieves each listed model as the list shows it', async () => {
    const list = await client.models.list();
    const ids = list.data.map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['sandbox', 'gpt-test', 'qwen/qwen2.5-coder-7b']));
    for (const m of list.data) expect(await client.models.retrieve(m.id)).toEqual(m);
    expect(await client.models.retrieve('sandbox')).toMatchObject({ id: 'sandbox', object: 'model', owned_by: 'codeloom' });
  });

  it('a slash in the id works encoded and bare', async () => {
    for (const path of ['qwen%2Fqwen2.5-coder-7b', 'qwen/qwen2.5-coder-7b']) {
      const res = await fetch(`${t.url}/openai/v1/models/${path}`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status, path).toBe(200);
      expect((await res.json()).id).toBe('qwen/qwen2.5-coder-7b');
    }
  });

  it('an unknown model is a 404 in OpenAI\'s error shape (the SDK throws NotFoundError)', async () => {
    const error = await client.models.retrieve('gpt-nope').then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    const res = await fetch(`${t.url}/openai/v1/models/gpt-nope`, { headers: { authorization: `Bearer ${token}` } });
    const body = await res.json();
    expect(body.error).toMatchObject({ type: 'not_found_error', code: 'not_found' });
    expect(body.error.message).toContain('gpt-nope');
    const anonymous = await fetch(`${t.url}/openai/v1/models/sandbox`);
    expect(anonymous.status).toBe(401);
  });
});
