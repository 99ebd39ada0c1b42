/**
 * The tokens-per-minute budget is reserved before a model call and settled after it
 * (docs/api.md "Token budget"): however many calls run at once, on however many instances,
 * the tokens admitted in a minute never pass the plan's figure (free: 20,000), and the
 * refused calls get 429 `rate_limited` with Retry-After (an error frame with retry_after on
 * the channel). The OpenAI fake reports 2,000 tokens a call, within what each call reserves
 * (an upper bound of the prompt + max_tokens 1,900), so about eight calls fit in a minute.
 *
 * Exact windows (CONTRACT §12.2, issue 23): against a fake upstream that reports true token counts
 * (fake-tokenizer.ts), concurrent CJK and emoji prompts are charged exactly what they used and never more
 * than the minute's figure; an upstream that ignores max_tokens is cut at it (finish_reason "length"); one
 * that reports no usage is charged what Codeloom counted; a call that can never fit is a 400
 * `request_too_large` on every surface.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import type { SpawnedServer } from './helpers/spawn-server.js';
import { clusterEnabled, startCluster, type Cluster } from './helpers/cluster.js';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { readSse } from './helpers/sse.js';
import { connect } from './helpers/ws-client.js';
import { awayFromWindowEnd } from './helpers/limit-windows.js';
import { chargedTotal, cjkPrompt, expectExactBurst, reportedUse } from './helpers/exact-spend.js';
import { buildGenerationMessages } from '../src/modules/generate/generation-prompt.js';
import { promptTokenBound } from '../src/modules/generate/model-call.js';
import OpenAI from 'openai';

const USAGE = { promptTokens: 100, completionTokens: 1_900 };
const FREE_TPM = 20_000;
const fakeEnv = (fake: FakeVendor) => ({ OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-test', CODELOOM_OPENAI_MODELS: 'gpt-test' });

type Outcome = { status: number; tokens: number; retryAfter: number; code?: string };

/** 40 concurrent POST /generate spread over `bases`, every fourth one as SSE; what each got. */
async function burst(bases: string[], token: string): Promise<Outcome[]> {
  return Promise.all(Array.from({ length: 40 }, async (_, i): Promise<Outcome> => {
    const stream = i % 4 === 0;
    const res = await fetch(`${bases[i % bases.length]}/api/v1/generate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: `todo API number ${i}`, model: 'gpt-test', max_tokens: 1_900, stream }),
    });
    const retryAfter = Number(res.headers.get('retry-after') ?? 0);
    if (res.status !== 200) return { status: res.status, tokens: 0, retryAfter, code: (await res.json()).code };
    if (!stream) return { status: 200, tokens: (await res.json()).tokens_used, retryAfter };
    const end = (await readSse(res)).at(-1)!;
    expect(end.event, JSON.stringify(end.frame).slice(0, 300)).toBe('complete');
    return { status: 200, tokens: end.frame.data.tokens_used, retryAfter };
  }));
}

function expectWithinBudget(outcomes: Outcome[]) {
  const ok = outcomes.filter((o) => o.status === 200);
  const refused = outcomes.filter((o) => o.status !== 200);
  expect(ok.every((o) => o.tokens === USAGE.promptTokens + USAGE.completionTokens)).toBe(true);
  const admitted = ok.reduce((n, o) => n + o.tokens, 0);
  expect(admitted).toBeLessThanOrEqual(FREE_TPM);
  expect(ok.length).toBeGreaterThanOrEqual(5);
  expect(refused.length).toBe(40 - ok.length);
  for (const r of refused) {
    expect(r).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(r.retryAfter).toBeGreaterThan(0);
    expect(r.retryAfter).toBeLessThanOrEqual(60);
  }
}

describe('token budget on one instance (SQLite, memory limit store)', () => {
  let fake: FakeVendor;
  let t: TestServer;

  beforeAll(async () => {
    fake = await startOpenAIFake({ record: false, script: { reply: 'word '.repeat(40), usage: USAGE, chunkDelayMs: 2 } });
    t = await startTestServer({ env: fakeEnv(fake) });
  });
  afterAll(async () => { await t?.close(); await fake?.close(); });

  it('40 concurrent generations (JSON and SSE) admit at most 20,000 tokens in the minute; the rest get 429 with Retry-After', async () => {
    await awayFromWindowEnd();
    const { token } = await registerUser(t.url, { ip: nextIp() });
    expectWithinBudget(await burst([t.url], token));
  });

  it('generations on one socket share the budget: refused ones end with a rate_limited error frame carrying retry_after', async () => {
    await awayFromWindowEnd();
    const { token } = await registerUser(t.url, { ip: nextIp() });
    const c = await connect(t.url, token);
    const ids = Array.from({ length: 14 }, (_, i) => `w${i}`);
    for (const id of ids) c.send({ type: 'generate', id, prompt: 'todo API', model: 'gpt-test', max_tokens: 1_900 });
    const ends = (await Promise.all(ids.map((id) => c.result(id)))).map((r) => r.end);
    const done = ends.filter((e) => e.event === 'complete');
    expect(done.reduce((n, e) => n + e.data.tokens_used, 0)).toBeLessThanOrEqual(FREE_TPM);
    expect(done.length).toBeGreaterThanOrEqual(5);
    const refused = ends.filter((e) => e.event === 'error');
    expect(refused.length).toBe(ids.length - done.length);
    for (const e of refused) {
      expect(e.data).toMatchObject({ status: 429, code: 'rate_limited', rate_limit: { limit: FREE_TPM } });
      expect(e.data.retry_after).toBeGreaterThan(0);
    }
    c.ws.close();
  });

  it('a call the client abandons gives back what it did not use', async () => {
    fake.script({ chunkDelayMs: 40 });
    try {
      await awayFromWindowEnd();
      const { token } = await registerUser(t.url, { ip: nextIp() });
      const big = { prompt: 'long one', model: 'gpt-test', max_tokens: 15_000 };
      const controller = new AbortController();
      const res = await fetch(`${t.url}/api/v1/generate`, { method: 'POST', signal: controller.signal, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ ...big, stream: true }) });
      expect(res.status).toBe(200);
      await res.body!.getReader().read();
      // While it runs, its reservation holds 15,000 of the 20,000.
      expect((await request(`${t.url}/api/v1/generate`, { token, body: big })).status).toBe(429);
      controller.abort();
      let status = 0;
      for (let i = 0; i < 40 && status !== 200; i++) {
        await new Promise((r) => setTimeout(r, 50));
        fake.script({ chunkDelayMs: 0 });
        status = (await request(`${t.url}/api/v1/generate`, { token, body: big })).status;
      }
      expect(status).toBe(200);
    } finally {
      fake.script({ chunkDelayMs: 2 });
    }
  });

  it('the sandbox environment stays free of the budget', async () => {
    const { token } = await registerUser(t.url, { ip: nextIp() });
    const sandbox = await Promise.all(Array.from({ length: 12 }, () => request(`${t.url}/api/v1/generate`, { token, headers: { 'x-environment': 'sandbox' }, body: { prompt: 'hello world script', language: 'bash', max_tokens: 8_000 } })));
    expect(sandbox.map((r) => r.status)).toEqual(Array(12).fill(200));
  });
});

/** The prompt bound Codeloom reserves for a /generate prompt in TypeScript without context (what a call with no usage report is charged for its prompt). */
const generateBound = (prompt: string) => promptTokenBound(buildGenerationMessages(prompt, 'typescript', undefined));
const generate = (base: string, token: string, body: Record<string, unknown>) => request(`${base}/api/v1/generate`, { token, body: { model: 'gpt-test', language: 'typescript', ...body } });

describe('exact windows on one instance (issue 23): an upper bound reserved, the cap enforced, the real use charged', () => {
  let fake: FakeVendor;
  let t: TestServer;
  const honest = { reply: 'word '.repeat(40), countTokens: true, honourMaxTokens: true, omitUsage: false, chunkDelayMs: 1 };

  beforeAll(async () => {
    fake = await startOpenAIFake({ script: honest });
    t = await startTestServer({ env: { ...fakeEnv(fake), CODELOOM_UPSTREAM_RETRIES: '0' } });
  });
  afterAll(async () => { await t?.close(); await fake?.close(); });

  it('16 concurrent CJK and emoji prompts: each charged exactly its reported use, all of them within the minute\'s 20,000', async () => {
    fake.reset();
    fake.script(honest);
    await awayFromWindowEnd(15);
    const { token } = await registerUser(t.url, { ip: nextIp() });
    // Each holds about 2,900 (bytes of its prompt + max_tokens) and uses about 1,700: the old estimate held about 950.
    const responses = await Promise.all(Array.from({ length: 16 }, (_, i) => generate(t.url, token, { prompt: cjkPrompt(i), max_tokens: 300 })));
    const { admitted } = await expectExactBurst({
      base: t.url, token, limit: FREE_TPM, responses, minAdmitted: 5,
      used: (i) => reportedUse(fake, cjkPrompt(i), 40),
    });
    expect(fake.requests).toHaveLength(admitted);
  });

  it('an upstream that ignores max_tokens is cut at it: finish_reason "length", its request ended, charged what was counted, within the minute', async () => {
    fake.reset();
    // A token a millisecond: the cut comes long before the 3,000th, and ends the upstream request there.
    fake.script({ ...honest, reply: 'word '.repeat(3_000), honourMaxTokens: false, chunkDelayMs: 1 });
    await awayFromWindowEnd(15);
    const { token } = await registerUser(t.url, { ip: nextIp() });
    const prompt = (i: number) => `todo API ${i}`;
    const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => generate(t.url, token, { prompt: prompt(i), max_tokens: 300 })));
    const ok = responses.filter((r) => r.status === 200);
    for (const r of ok) {
      expect(r.body.finish_reason).toBe('length');
      expect(r.body.output).toBe('word '.repeat(300));
    }
    // No report came (the stream was cut before its end): the prompt's bound and the 300 pieces received, exactly what was reserved.
    await expectExactBurst({
      base: t.url, token, limit: FREE_TPM, responses, minAdmitted: 20,
      used: (i) => ({ prompt_tokens: generateBound(prompt(i)), completion_tokens: 300 }),
    });
    await fake.waitForAborts(ok.length, 5_000);

    // Streamed, with max_tokens 1: one token, then `complete` with finish_reason length.
    const { token: other } = await registerUser(t.url, { ip: nextIp() });
    const sse = await fetch(`${t.url}/api/v1/generate`, { method: 'POST', headers: { authorization: `Bearer ${other}`, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'one', model: 'gpt-test', language: 'typescript', max_tokens: 1, stream: true }) });
    const frames = await readSse(sse);
    expect(frames.filter((f) => f.event === 'token').map((f) => f.frame.data)).toEqual(['word ']);
    expect(frames.at(-1)!.frame.data).toMatchObject({ finish_reason: 'length', usage: { prompt_tokens: generateBound('one'), completion_tokens: 1 } });
    // The OpenAI-compatible route, streamed: the last chunk says length, and usage is what was charged.
    const openai = new OpenAI({ apiKey: other, baseURL: `${t.url}/openai/v1`, maxRetries: 0 });
    const chunks = [];
    for await (const c of await openai.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2, stream: true, stream_options: { include_usage: true } })) chunks.push(c);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('word word ');
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0]?.finish_reason).toBe('length');
    expect(chunks.at(-1)!.usage).toMatchObject({ completion_tokens: 2 });
  });

  it('an upstream that reports no usage is charged what Codeloom counted: the prompt\'s bound and the tokens received', async () => {
    fake.reset();
    fake.script({ ...honest, omitUsage: true });
    await awayFromWindowEnd(15);
    const { token } = await registerUser(t.url, { ip: nextIp() });
    const res = await generate(t.url, token, { prompt: 'todo API', max_tokens: 100 });
    expect(res.status, res.text).toBe(200);
    const counted = { prompt_tokens: generateBound('todo API'), completion_tokens: 40 };
    expect(res.body.usage).toEqual(counted);
    expect(res.body.tokens_used).toBe(counted.prompt_tokens + 40);
    expect(await chargedTotal(t.url, token)).toBe(res.body.tokens_used);
    // The minute was charged as much: a call needing one token more than is left is refused, and the headers say what is left.
    const left = FREE_TPM - res.body.tokens_used;
    const probe = await generate(t.url, token, { prompt: 'probe', max_tokens: left - generateBound('probe') + 1 });
    expect(probe.status, probe.text).toBe(429);
    expect(probe.headers.get('x-ratelimit-remaining')).toBe(String(left));
  });

  it('a call that can never fit is a 400 request_too_large (no Retry-After), on REST, SSE, the OpenAI route and the channel; it holds nothing', async () => {
    fake.reset();
    fake.script(honest);
    await awayFromWindowEnd(15);
    const { token } = await registerUser(t.url, { ip: nextIp() });
    for (const body of [{ prompt: 'todo API', max_tokens: 20_000 }, { prompt: '漢'.repeat(7_000), max_tokens: 10 }, { prompt: 'todo API', max_tokens: 20_000, stream: true }]) {
      const res = await generate(t.url, token, body);
      expect(res.status, res.text).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.headers.get('retry-after')).toBeNull();
      expect(res.body).toMatchObject({ status: 400, code: 'request_too_large', type: '/docs/errors#request_too_large' });
      expect(res.body.detail).toMatch(/can never fit; lower max_tokens or shorten the prompt/);
    }
    const started = Date.now();
    const openai = new OpenAI({ apiKey: token, baseURL: `${t.url}/openai/v1`, maxRetries: 2 });
    const refused = await openai.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }], max_tokens: 25_000 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ type: 'invalid_request_error', code: 'request_too_large' });
    // The SDK does not wait and retry a 400, as it did a 429 with Retry-After.
    expect(Date.now() - started).toBeLessThan(2_000);
    const c = await connect(t.url, token);
    c.send({ type: 'generate', id: 'big', prompt: 'todo API', model: 'gpt-test', max_tokens: 20_000 });
    const { end } = await c.result('big');
    expect(end).toMatchObject({ event: 'error', data: { status: 400, code: 'request_too_large' } });
    c.ws.close();
    expect(fake.requests).toHaveLength(0);
    // Nothing was held: the whole minute is still there for a call that fits.
    expect((await generate(t.url, token, { prompt: 'todo API', max_tokens: FREE_TPM - generateBound('todo API') })).status).toBe(200);
  });
});

if (!clusterEnabled) console.log('skipping the two-instance token budget test: it needs TEST_DATABASE_URL and TEST_REDIS_URL');

describe.skipIf(!clusterEnabled)('token budget across two server processes on PostgreSQL + Redis', () => {
  let fake: FakeVendor;
  let cluster: Cluster;
  let a: SpawnedServer;
  let b: SpawnedServer;

  beforeAll(async () => {
    fake = await startOpenAIFake({ record: false, script: { reply: 'word '.repeat(40), usage: USAGE, chunkDelayMs: 2 } });
    cluster = await startCluster('tpm', { env: fakeEnv(fake) });
    [a, b] = cluster.servers as [SpawnedServer, SpawnedServer];
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
    await fake?.close();
  });

  it('40 concurrent generations across both admit at most 20,000 tokens in the minute; the rest get 429 with Retry-After', async () => {
    await awayFromWindowEnd();
    const { token } = await registerUser(a.url, { ip: nextIp() });
    expectWithinBudget(await burst([a.url, b.url], token));
  });
});
