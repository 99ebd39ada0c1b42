/**
 * The Responses API end to end over recorded OpenAI chat transcripts (fixtures/openai-chat-*): the official
 * `openai` SDK calls Codeloom's /openai/v1/responses, whose OpenAI-compatible model is served by the fixture
 * server replaying OpenAI's own chat completion bytes (whole, and with every SSE event split mid-character).
 * What the client gets back must be what the upstream sent, as Responses API items: the text (accents and all)
 * as an output_text, each recorded tool call as a function_call item with its call_… id and arguments, the
 * recorded usage as input/output tokens, a length cut as status incomplete; the upstream's errors keep their
 * meaning (400 context_length_exceeded, 429 with Retry-After) and its in-band error ends the stream with
 * response.failed.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, nextIp, type TestServer } from '../helpers/test-server.js';
import { registerUser, request } from '../helpers/http.js';
import { fixture, startFixtureServer, type FixtureServer } from './fixture-server.js';

const MODEL = 'gpt-4o-mini';
let upstream: FixtureServer;
let t: TestServer;
let key: string;

const client = () => new OpenAI({ baseURL: `${t.url}/openai/v1`, apiKey: key, maxRetries: 0 });
const recorded = (name: string) => JSON.parse(fixture(name).toString('utf8'));
const tools: OpenAI.Responses.FunctionTool[] = [
  { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string' } }, required: ['city', 'unit'] }, strict: false },
  { type: 'function', name: 'get_time', parameters: { type: 'object', properties: { timezone: { type: 'string' } }, required: ['timezone'] }, strict: false },
];

beforeAll(async () => {
  upstream = await startFixtureServer({ sse: 'openai-chat-stream.sse', json: 'openai-chat.json' });
  t = await startTestServer({ env: { OPENAI_BASE_URL: `${upstream.url}/v1`, OPENAI_API_KEY: 'sk-up', CODELOOM_OPENAI_MODELS: MODEL, CODELOOM_DEFAULT_MODEL: 'sandbox', CODELOOM_UPSTREAM_RETRIES: '0' } });
  const { token } = await registerUser(t.url, { ip: nextIp() });
  const res = await request(`${t.url}/api/v1/api-keys`, { token, body: { name: 'transcripts' } });
  key = res.body.key;
}, 60_000);
afterAll(async () => { await t?.close(); await upstream?.close(); });

describe('recorded OpenAI chat answers, through the Responses API, to the openai SDK', () => {
  it.each([false, true])('text (events split: %s): one message item with the recorded text and usage, JSON and streamed', async (split) => {
    const want = recorded('openai-chat.json');
    upstream.reset();
    upstream.serve({ sse: 'openai-chat-stream.sse' }, { split, times: 2 });
    const json = await client().responses.create({ model: MODEL, input: 'greet in python' });
    expect(json).toMatchObject({ status: 'completed', model: MODEL, output: [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: want.choices[0].message.content, annotations: [] }] }] });
    expect(json.usage).toMatchObject({ input_tokens: want.usage.prompt_tokens, output_tokens: want.usage.completion_tokens, total_tokens: want.usage.total_tokens });
    const deltas: string[] = [];
    const stream = client().responses.stream({ model: MODEL, input: 'greet in python' });
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    const streamed = await stream.finalResponse();
    expect(streamed.output_text).toBe(want.choices[0].message.content);
    expect(deltas.join('')).toBe(want.choices[0].message.content);
    expect(streamed.usage).toEqual(json.usage);
    // The Responses request went upstream as a chat completion.
    expect(upstream.requests[0]!.path).toBe('/v1/chat/completions');
    expect(upstream.requests[0]!.body.messages).toEqual([{ role: 'user', content: 'greet in python' }]);
  });

  it.each([false, true])('two parallel tool calls (events split: %s): two function_call items with the recorded ids and arguments, JSON and streamed', async (split) => {
    const want = recorded('openai-chat-tool-calls.json').choices[0].message.tool_calls.map((c: { id: string; function: { name: string; arguments: string } }) => ({ type: 'function_call', call_id: c.id, name: c.function.name, arguments: c.function.arguments, status: 'completed' }));
    upstream.reset();
    upstream.serve({ sse: 'openai-chat-tool-calls-stream.sse' }, { split, times: 2 });
    const json = await client().responses.create({ model: MODEL, input: 'Weather and time in Paris?', tools });
    expect(json.output).toMatchObject(want);
    expect(json.output.map((o) => o.type)).toEqual(['function_call', 'function_call']);
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    const stream = client().responses.stream({ model: MODEL, input: 'Weather and time in Paris?', tools });
    stream.on('event', (e) => events.push(e));
    const streamed = await stream.finalResponse();
    expect(streamed.output).toMatchObject(want);
    const done = events.filter((e): e is OpenAI.Responses.ResponseFunctionCallArgumentsDoneEvent => e.type === 'response.function_call_arguments.done');
    expect(done.map((e) => [e.output_index, e.name, e.arguments])).toEqual(want.map((w: { name: string; arguments: string }, i: number) => [i, w.name, w.arguments]));
    expect(upstream.requests[0]!.body).toMatchObject({ stream: true, tools: [{ type: 'function', function: { name: 'get_weather' } }, { type: 'function', function: { name: 'get_time' } }] });
  });

  it('an answer cut at max_tokens is status incomplete (max_output_tokens)', async () => {
    upstream.reset();
    upstream.serve({ sse: 'openai-chat-stream-length.sse' });
    const r = await client().responses.create({ model: MODEL, input: 'x', max_output_tokens: 16 });
    expect(r).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    expect(upstream.requests[0]!.body.max_tokens).toBe(16);
  });

  it('OpenAI\'s 400 keeps its code and param; its 429 (after Codeloom\'s retries) is a 429 with its Retry-After', async () => {
    upstream.reset();
    upstream.serve({ http: 'openai-error-400.http' });
    const rejected = await client().responses.create({ model: MODEL, input: 'x' }).catch((e: unknown) => e);
    expect(rejected).toBeInstanceOf(OpenAI.BadRequestError);
    expect((rejected as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ type: 'invalid_request_error', code: 'context_length_exceeded', param: 'messages' });
    upstream.reset();
    upstream.serve({ http: 'openai-error-429.http' }, { times: 5 });
    const limited = await client().responses.create({ model: MODEL, input: 'x', stream: true }).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect((limited as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('retry-after')).toMatch(/^\d+$/);
  });

  it('OpenAI\'s in-band error after output ends the stream with response.failed; nothing is stored', async () => {
    upstream.reset();
    upstream.serve({ sse: 'openai-chat-stream-midstream-error.sse' });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const e of await client().responses.create({ model: MODEL, input: 'x', stream: true })) events.push(e);
    const last = events.at(-1) as OpenAI.Responses.ResponseFailedEvent;
    expect(last.type).toBe('response.failed');
    expect(last.response.status).toBe('failed');
    expect(last.response.error?.message).toEqual(expect.any(String));
    expect(events.some((e) => e.type === 'response.output_text.delta')).toBe(true);
    expect(await client().responses.retrieve(last.response.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
  });
});
