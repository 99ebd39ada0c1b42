/**
 * Fallbacks (docs/models.md "Fallbacks") through the one model-call loop, with the real OpenAI-compatible
 * provider against the fake vendor: a failure before the first token (5xx, 429, timeout, refused
 * connection) moves on to the next model; a 4xx or a failure after output started does not. Usage
 * accounting hears of every call once, with the model that served or last failed.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startOpenAIFake, type FakeVendor } from '../../../test/fakes/openai-fake.js';
import { MemoryLimitStore } from '../../limits/memory-limit-store.js';
import { TokenSpend, type SpendSubject } from '../../limits/token-spend.js';
import type { RegisteredModel } from '../../providers/model-registry.js';
import { createOpenAIProvider } from '../../providers/openai/openai-provider.js';
import { createSandboxProvider } from '../../providers/sandbox/sandbox-provider.js';
import { AppError } from '../../errors.js';
import { callModel, type UsageEntry } from './model-call.js';
import { parseFallbacks } from '../../providers/model-fallbacks.js';

let fake: FakeVendor;
beforeAll(async () => { fake = await startOpenAIFake(); });
beforeEach(() => fake.reset());
afterAll(() => fake.close());

const sandbox: RegisteredModel = { id: 'sandbox', upstreamId: 'sandbox', provider: createSandboxProvider(), description: 'sandbox' };
const upstream = (baseUrl: string, fallbacks: RegisteredModel[] = [sandbox]): RegisteredModel => ({
  id: 'gpt-test', upstreamId: 'gpt-test', description: 'fake', fallbacks,
  provider: createOpenAIProvider({ baseUrl, apiKey: 'sk', timeoutMs: 300, maxRetries: 0 }),
});
const subject = (): SpendSubject => ({ user: { id: `usr_${Math.random().toString(36).slice(2)}` }, org: { plan: 'free' }, environment: 'production', apiKeyId: 'key_1' });

async function run(model: RegisteredModel) {
  const entries: UsageEntry[] = [];
  const pieces: string[] = [];
  const attempts: string[] = [];
  const result = await callModel(new TokenSpend(new MemoryLimitStore()), {
    subject: subject(), model, messages: [{ role: 'user', content: 'todo API' }], maxTokens: 200,
    onText: (t) => { pieces.push(t); }, onAttempt: (m) => { attempts.push(m.id); },
  }, { record: (e) => { entries.push(e); } }).catch((error: unknown) => error);
  return { result, entries, pieces, attempts };
}

describe('fallbacks', () => {
  it.each([
    ['a 503', () => fake.script({ failNext: { count: 1, status: 503 } })],
    ['a 429', () => fake.script({ failNext: { count: 1, status: 429, retryAfter: 1 } })],
    ['a timeout', () => fake.script({ hang: true })],
    ['a reset connection', () => fake.script({ resetNext: 1 })],
  ])('%s before the first token: the next model serves, and usage names it', async (_name, arrange) => {
    arrange();
    const { result, entries, attempts } = await run(upstream(`${fake.url}/v1`));
    expect(result).toMatchObject({ model: { id: 'sandbox' }, finishReason: expect.any(String) });
    expect(attempts).toEqual(['gpt-test', 'sandbox']);
    expect(entries).toEqual([expect.objectContaining({ model: 'sandbox', outcome: 'succeeded', subject: expect.objectContaining({ apiKeyId: 'key_1' }) })]);
  });

  it('a refused connection falls back too', async () => {
    const { result } = await run(upstream('http://127.0.0.1:1/v1'));
    expect(result).toMatchObject({ model: { id: 'sandbox' } });
  });

  it('a 4xx other than 429 does not fall back: it would fail the same way elsewhere', async () => {
    fake.script({ failNext: { count: 1, status: 400 } });
    const { result, entries, attempts } = await run(upstream(`${fake.url}/v1`));
    expect(result).toBeInstanceOf(AppError);
    expect(attempts).toEqual(['gpt-test']);
    expect(entries).toEqual([expect.objectContaining({ model: 'gpt-test', outcome: 'failed', completionTokens: 0 })]);
  });

  it('never after output started: the failure reaches the caller with only the first model\'s text', async () => {
    fake.script({ reply: 'one two three four', cutAfterChunks: 2 });
    const { result, entries, pieces, attempts } = await run(upstream(`${fake.url}/v1`));
    expect(result).toBeInstanceOf(AppError);
    expect(pieces.join('')).toBe('one two ');
    expect(attempts).toEqual(['gpt-test']);
    expect(entries).toEqual([expect.objectContaining({ model: 'gpt-test', outcome: 'failed', completionTokens: 2 })]);
  });

  it('when every model fails, the last failure is the answer', async () => {
    fake.script({ failNext: { count: 2, status: 500 } });
    const second = upstream(`${fake.url}/v1`, []);
    const { result, attempts } = await run(upstream(`${fake.url}/v1`, [{ ...second, id: 'gpt-two' }]));
    expect(result).toMatchObject({ code: 'upstream_error' });
    expect(attempts).toEqual(['gpt-test', 'gpt-two']);
  });
});

describe('CODELOOM_MODEL_FALLBACKS', () => {
  it('parses model=a|b entries and lists every problem', () => {
    expect(parseFallbacks('gpt=claude|sandbox, claude=sandbox', ['gpt', 'claude', 'sandbox'])).toEqual({ fallbacks: new Map([['gpt', ['claude', 'sandbox']], ['claude', ['sandbox']]]), problems: [] });
    expect(parseFallbacks(undefined, ['sandbox'])).toEqual({ fallbacks: new Map(), problems: [] });
    const { problems } = parseFallbacks('gpt=nope,sandbox=sandbox,broken', ['gpt', 'sandbox']);
    expect(problems).toEqual([
      'CODELOOM_MODEL_FALLBACKS: unknown model "nope"; configured: gpt, sandbox',
      'CODELOOM_MODEL_FALLBACKS: "sandbox" names itself as a fallback',
      'CODELOOM_MODEL_FALLBACKS: "broken" is not model=fallback1|fallback2',
    ]);
  });
});
