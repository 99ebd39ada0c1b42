/**
 * Raw completions (CONTRACT §12.3, issue 24 item 2): POST /openai/v1/completions without `suffix` sends
 * `prompt` unchanged to an OpenAI-compatible back-end's /v1/completions — the way editors that render their
 * own fill-in-the-middle template work. Continue's exact autocomplete request (fixtures/continue/) is
 * replayed: its template-rendered prompt arrives byte for byte, with its twelve stop words. Other back-ends
 * read the prompt as a user message; the sandbox answers as before.
 */
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIFake } from './fakes/openai-fake.js';
import { startAnthropicFake } from './fakes/anthropic-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';

const CONTINUE = JSON.parse(readFileSync(new URL('./fixtures/continue/autocomplete-qwen2.5-coder.json', import.meta.url), 'utf8'));

let openaiUp: FakeVendor;
let anthropicUp: FakeVendor;
let t: TestServer;
let key: string;

const client = () => new OpenAI({ apiKey: key, baseURL: `${t.url}/openai/v1`, maxRetries: 0 });

beforeAll(async () => {
  openaiUp = await startOpenAIFake({ script: { reply: 'return JSON.parse(text) as Config;' } });
  anthropicUp = await startAnthropicFake({ script: { reply: 'return JSON.parse(text);' } });
  t = await startTestServer({ env: {
    OPENAI_BASE_URL: `${openaiUp.url}/v1`, OPENAI_API_KEY: 'sk-up', CODELOOM_OPENAI_MODELS: `${CONTINUE.model},gpt-chat`,
    ANTHROPIC_BASE_URL: anthropicUp.url, ANTHROPIC_API_KEY: 'sk-ant-up', CODELOOM_ANTHROPIC_MODELS: 'claude-test',
    CODELOOM_DEFAULT_MODEL: 'sandbox', CODELOOM_UPSTREAM_RETRIES: '0',
  } });
  const { token } = await registerUser(t.url, { ip: nextIp() });
  const res = await request(`${t.url}/api/v1/api-keys`, { token, body: { name: 'continue' } });
  expect(res.status, res.text).toBe(201);
  key = res.body.key;
}, 60_000);
afterAll(async () => { await t?.close(); await openaiUp?.close(); await anthropicUp?.close(); });

describe('raw completions', () => {
  it('Continue\'s autocomplete request, replayed as it sends it: the prompt reaches /v1/completions byte for byte, with its 12 stop words, streamed back', async () => {
    openaiUp.reset();
    const res = await fetch(`${t.url}/openai/v1/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(CONTINUE) });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = text.split('\n\n').filter(Boolean).map((l) => l.replace(/^data: /, ''));
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    expect(chunks.every((c) => c.object === 'text_completion')).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.text ?? '').join('')).toBe('return JSON.parse(text) as Config;');
    expect(openaiUp.requests).toHaveLength(1);
    const sent = openaiUp.requests[0]!;
    expect(sent.path).toBe('/v1/completions');
    expect(sent.body.prompt).toBe(CONTINUE.prompt);
    expect(sent.body.stop).toEqual(CONTINUE.stop);
    expect(sent.body).toMatchObject({ model: CONTINUE.model, max_tokens: 1024, temperature: 0.01, stream: true });
    expect(sent.body).not.toHaveProperty('messages');
    expect(sent.body).not.toHaveProperty('suffix');
  });

  it('with the openai SDK, not streamed and with 4 stop words or fewer, the same: the prompt is never wrapped into a chat message', async () => {
    openaiUp.reset();
    const res = await client().completions.create({ model: CONTINUE.model, prompt: CONTINUE.prompt, max_tokens: 64, stop: ['<|endoftext|>', '\n\n'] });
    expect(res).toMatchObject({ object: 'text_completion', model: CONTINUE.model, choices: [{ text: 'return JSON.parse(text) as Config;', finish_reason: 'stop' }] });
    expect(openaiUp.requests[0]).toMatchObject({ path: '/v1/completions', body: { prompt: CONTINUE.prompt, stop: ['<|endoftext|>', '\n\n'], max_tokens: 64 } });
    // Chat completions still go to /v1/chat/completions.
    await client().chat.completions.create({ model: 'gpt-chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(openaiUp.requests[1]!.path).toBe('/v1/chat/completions');
  });

  it('an Anthropic model (no raw completions) reads the prompt as a user message; the sandbox answers as before', async () => {
    anthropicUp.reset();
    const res = await client().completions.create({ model: 'claude-test', prompt: 'def add(a, b):', max_tokens: 20 });
    expect(res.choices[0]!.text).toBe('return JSON.parse(text);');
    expect(anthropicUp.requests[0]!.body.messages).toEqual([{ role: 'user', content: 'def add(a, b):' }]);
    const sandbox = await client().completions.create({ model: 'sandbox', prompt: 'A CLI in Go', max_tokens: 30 });
    expect(sandbox.choices[0]!.text.length).toBeGreaterThan(0);
  });

  it('stop takes up to 64 strings here too; 65 is a 400 naming stop', async () => {
    const many = client().completions.create({ model: CONTINUE.model, prompt: 'x', stop: Array.from({ length: 65 }, (_, i) => `s${i}`) });
    await expect(many).rejects.toMatchObject({ status: 400, param: 'stop' });
    await expect(many).rejects.toThrow(/stop must be a string or up to 64 strings/);
    openaiUp.reset();
    await client().completions.create({ model: CONTINUE.model, prompt: 'x', stop: Array.from({ length: 64 }, (_, i) => `s${i}`) });
    expect(openaiUp.requests[0]!.body.stop).toHaveLength(64);
  });
});
