/**
 * The Anthropic Messages API end to end over recorded Anthropic transcripts (fixtures/anthropic-*): the
 * official `@anthropic-ai/sdk` calls Codeloom's /anthropic, whose Anthropic model is served by the fixture
 * server replaying Anthropic's own bytes (whole, and with every SSE event split mid-character). What the
 * client gets back must be what Anthropic sent: the text, the tool_use block (its toolu_ id and input), the
 * stop reason and stop sequence, the usage; Anthropic's errors keep their meaning (429 with Retry-After).
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, nextIp, type TestServer } from '../helpers/test-server.js';
import { registerUser, request } from '../helpers/http.js';
import { fixture, startFixtureServer, type FixtureServer } from './fixture-server.js';

const MODEL = 'claude-sonnet-4-5-20250929';
let upstream: FixtureServer;
let t: TestServer;
let key: string;

const client = () => new Anthropic({ baseURL: `${t.url}/anthropic`, apiKey: key, maxRetries: 0 });
const recorded = (name: string) => JSON.parse(fixture(name).toString('utf8'));
const ask: Anthropic.MessageParam = { role: 'user', content: 'Weather in Paris?' };
const tools: Anthropic.Tool[] = [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string' } }, required: ['city', 'unit'] } }];

beforeAll(async () => {
  upstream = await startFixtureServer({ sse: 'anthropic-messages-stream.sse', json: 'anthropic-messages.json' });
  t = await startTestServer({ env: { ANTHROPIC_BASE_URL: upstream.url, ANTHROPIC_API_KEY: 'sk-ant-up', CODELOOM_ANTHROPIC_MODELS: MODEL, CODELOOM_DEFAULT_MODEL: 'sandbox', CODELOOM_UPSTREAM_RETRIES: '0' } });
  const { token } = await registerUser(t.url, { ip: nextIp() });
  const res = await request(`${t.url}/api/v1/api-keys`, { token, body: { name: 'transcripts' } });
  key = res.body.key;
}, 60_000);
afterAll(async () => { await t?.close(); await upstream?.close(); });

describe('recorded Anthropic answers, through Codeloom, to the Anthropic SDK', () => {
  it.each([false, true])('a text block then a tool_use block (events split: %s): content, stop_reason and usage as recorded, JSON and streamed', async (split) => {
    const want = recorded('anthropic-messages-tool-use.json');
    upstream.reset();
    upstream.serve({ sse: 'anthropic-messages-tool-use-stream.sse' }, { split, times: 2 });
    const json = await client().messages.create({ model: MODEL, max_tokens: 200, messages: [ask], tools });
    expect(json).toMatchObject({ model: MODEL, content: want.content, stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: want.usage.input_tokens, output_tokens: want.usage.output_tokens } });
    const streamed = await client().messages.stream({ model: MODEL, max_tokens: 200, messages: [ask], tools }).finalMessage();
    expect(streamed).toMatchObject({ model: MODEL, content: want.content, stop_reason: 'tool_use', stop_sequence: null, usage: { output_tokens: want.usage.output_tokens, input_tokens: want.usage.input_tokens } });
    // Codeloom always streams from the upstream, with the tools in Anthropic's fields.
    expect(upstream.requests[0]!.body).toMatchObject({ stream: true, tools: [{ name: 'get_weather', input_schema: tools[0]!.input_schema }] });
  });

  it('an answer ended by a stop sequence: stop_reason "stop_sequence" naming it, as recorded', async () => {
    const want = recorded('anthropic-messages-stop-sequence.json');
    upstream.reset();
    upstream.serve({ sse: 'anthropic-messages-stream-stop-sequence.sse' }, { times: 2 });
    const params = { model: MODEL, max_tokens: 200, stop_sequences: [want.stop_sequence], messages: [{ role: 'user' as const, content: 'greet in python' }] };
    expect(await client().messages.create(params)).toMatchObject({ content: want.content, stop_reason: 'stop_sequence', stop_sequence: want.stop_sequence });
    expect(await client().messages.stream(params).finalMessage()).toMatchObject({ content: want.content, stop_reason: 'stop_sequence', stop_sequence: want.stop_sequence });
    expect(upstream.requests[0]!.body.stop_sequences).toEqual([want.stop_sequence]);
  });

  it('an answer cut at max_tokens is stop_reason "max_tokens"', async () => {
    upstream.reset();
    upstream.serve({ sse: 'anthropic-messages-stream-length.sse' });
    const msg = await client().messages.create({ model: MODEL, max_tokens: 16, messages: [ask] });
    expect(msg.stop_reason).toBe('max_tokens');
  });

  it('Anthropic\'s 429 (after Codeloom\'s retries) is a 429 rate_limit_error keeping its Retry-After; its 400 a 400 invalid_request_error with its message', async () => {
    upstream.reset();
    upstream.serve({ http: 'anthropic-error-429.http' }, { times: 5 });
    const limited = await client().messages.create({ model: MODEL, max_tokens: 16, messages: [ask] }).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    const e = limited as InstanceType<typeof Anthropic.RateLimitError>;
    expect(e.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    expect(e.headers?.get('retry-after')).toBe('20');
    upstream.reset();
    upstream.serve({ http: 'anthropic-error-400.http' });
    const rejected = await client().messages.create({ model: MODEL, max_tokens: 16, messages: [ask] }).catch((e: unknown) => e);
    expect(rejected).toBeInstanceOf(Anthropic.BadRequestError);
    expect((rejected as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('max_tokens: 100000 > 64000') } });
  });

  it('Anthropic\'s in-band error after output ends Codeloom\'s stream with an `error` event; the SDK throws', async () => {
    upstream.reset();
    upstream.serve({ sse: 'anthropic-messages-stream-midstream-error.sse' }, { times: 2 });
    const res = await fetch(`${t.url}/anthropic/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: JSON.stringify({ model: MODEL, max_tokens: 100, stream: true, messages: [ask] }) });
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).toContain('event: content_block_delta');
    expect(text.trimEnd().split('\n\n').at(-1)).toMatch(/^event: error\ndata: \{"type":"error","error":\{"type":"[a-z_]+","message":/);
    expect(text).not.toContain('event: message_stop');
    const thrown = await client().messages.stream({ model: MODEL, max_tokens: 100, messages: [ask] }).finalMessage().catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(Anthropic.APIError);
  });
});
