/**
 * POST /openai/v1/embeddings (CONTRACT §12.3) through the official `openai` SDK (which asks for base64 and
 * decodes it): the sandbox model's deterministic offline vectors, an upstream embedding model named in
 * CODELOOM_OPENAI_EMBEDDING_MODELS (inputs passed on unchanged, its usage reported back and recorded, priced),
 * budgets and token windows applying as to any model call, and clear errors for models without embeddings.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddingsFake, type EmbeddingsFake } from './fakes/openai-embeddings-fake.js';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';

const cosine = (a: number[], b: number[]) => a.reduce((n, x, i) => n + x * b[i]!, 0) / Math.sqrt(a.reduce((n, x) => n + x * x, 0) * b.reduce((n, x) => n + x * x, 0));

describe('POST /openai/v1/embeddings', () => {
  let fake: EmbeddingsFake;
  let t: TestServer;
  let token: string;
  let client: OpenAI;
  beforeAll(async () => {
    fake = await startEmbeddingsFake();
    t = await startTestServer({ env: {
      OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-up', CODELOOM_OPENAI_MODELS: 'gpt-test,embed-test', CODELOOM_OPENAI_EMBEDDING_MODELS: 'embed-test',
      CODELOOM_DEFAULT_MODEL: 'sandbox', CODELOOM_UPSTREAM_RETRIES: '0', CODELOOM_MODEL_PRICES: JSON.stringify({ 'embed-test': { input: 1000, output: 0 } }),
    } });
    token = (await registerUser(t.url, { ip: nextIp() })).token;
    client = new OpenAI({ apiKey: token, baseURL: `${t.url}/openai/v1`, maxRetries: 0 });
  });
  afterAll(async () => { await t?.close(); await fake?.close(); });

  it('the sandbox model: deterministic unit vectors, similar texts closer, base64 (the SDK default) and float alike', async () => {
    const texts = ['parse a CSV file in Python', 'read a CSV file with Python', 'configure nginx as a reverse proxy'];
    const res = await client.embeddings.create({ model: 'sandbox', input: texts });
    expect(res.object).toBe('list');
    expect(res.model).toBe('sandbox');
    expect(res.data.map((d) => d.index)).toEqual([0, 1, 2]);
    const [a, b, c] = res.data.map((d) => d.embedding);
    expect(a).toHaveLength(256);
    expect(Math.abs(a!.reduce((n, x) => n + x * x, 0) - 1)).toBeLessThan(1e-5);
    expect(cosine(a!, b!)).toBeGreaterThan(cosine(a!, c!) + 0.2);
    const floats = await client.embeddings.create({ model: 'sandbox', input: texts[0]!, encoding_format: 'float', dimensions: 64 });
    expect(floats.data[0]!.embedding).toHaveLength(64);
    const again = await client.embeddings.create({ model: 'sandbox', input: texts[0]!, encoding_format: 'float' });
    // base64 carries float32: the same vector to float32 precision.
    again.data[0]!.embedding.forEach((x, i) => expect(x).toBeCloseTo(a![i]!, 6));
    // One token a word for the sandbox: six words each.
    expect(res.usage).toEqual({ prompt_tokens: 18, total_tokens: 18 });
  });

  it('an upstream embedding model: inputs passed on unchanged (texts and token ids), its usage reported, recorded and priced', async () => {
    const res = await client.embeddings.create({ model: 'embed-test', input: ['one two three', 'four five'], dimensions: 4 });
    const sent = fake.requests.at(-1)!;
    expect(sent.body).toEqual({ model: 'embed-test', input: ['one two three', 'four five'], encoding_format: 'float', dimensions: 4 });
    expect(sent.headers.authorization).toBe('Bearer sk-up');
    expect(res.data.map((d) => d.embedding.slice(0, 2))).toEqual([[0, 3], [1, 2]]);
    expect(res.usage).toEqual({ prompt_tokens: 5, total_tokens: 5 });
    const ids = await client.embeddings.create({ model: 'embed-test', input: [[101, 2023, 102]], encoding_format: 'float' });
    expect(fake.requests.at(-1)!.body.input).toEqual([[101, 2023, 102]]);
    expect(ids.usage.prompt_tokens).toBe(3);
    const usage = await request(`${t.url}/api/v1/usage?group_by=model`, { token });
    const row = usage.body.data.find((r: any) => r.model === 'embed-test');
    expect(row).toMatchObject({ requests: 2, prompt_tokens: 8, completion_tokens: 0, cost_usd: 0.008 });
  });

  it('models without embeddings, unknown models and bad input are 4xx in OpenAI\'s shape', async () => {
    const chat = await client.embeddings.create({ model: 'gpt-test', input: 'x' }).then(() => undefined, (e: unknown) => e);
    expect(chat).toBeInstanceOf(OpenAI.BadRequestError);
    expect((chat as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('model');
    expect((chat as Error).message).toContain('does not offer embeddings');
    const unknown = await client.embeddings.create({ model: 'nope', input: 'x' }).then(() => undefined, (e: unknown) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    for (const input of ['', [], [''], [[]]]) {
      const bad = await client.embeddings.create({ model: 'sandbox', input } as never).then(() => undefined, (e: unknown) => e);
      expect(bad, JSON.stringify(input)).toBeInstanceOf(OpenAI.BadRequestError);
    }
    fake.failNext(1, 400);
    const rejected = await client.embeddings.create({ model: 'embed-test', input: 'x' }).then(() => undefined, (e: unknown) => e);
    expect(rejected).toBeInstanceOf(OpenAI.BadRequestError);
  });

  it('budgets apply: a priced embedding call reserves its inputs\' bytes at the input price', async () => {
    const user = await registerUser(t.url, { ip: nextIp() });
    const org = (await request(`${t.url}/api/v1/user/profile`, { token: user.token })).body.organization.id;
    // $0.03 at $1,000 per million tokens ($0.001 a token): 30 tokens' worth. "one two three" reserves 13 bytes + 2 and is charged 3.
    await request(`${t.url}/api/v1/budgets`, { token: user.token, body: { scope: { type: 'organization', id: org }, amount_usd: 0.03, period: 'total' } });
    const own = new OpenAI({ apiKey: user.token, baseURL: `${t.url}/openai/v1`, maxRetries: 0 });
    expect((await own.embeddings.create({ model: 'embed-test', input: 'one two three' })).usage.prompt_tokens).toBe(3);
    const tooLarge = await own.embeddings.create({ model: 'embed-test', input: 'x'.repeat(40) }).then(() => undefined, (e: unknown) => e);
    expect(tooLarge).toBeInstanceOf(OpenAI.BadRequestError);
    expect((tooLarge as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('request_too_large');
    const spent = (await request(`${t.url}/api/v1/budgets`, { token: user.token })).body.data[0].spent_usd;
    expect(spent).toBe(0.003);
  });
});
