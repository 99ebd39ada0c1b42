/**
 * The Anthropic Messages API under /anthropic (CONTRACT §12.3, issue 24 item 3), driven by the official
 * `@anthropic-ai/sdk` with base URL http://HOST:PORT/anthropic: messages.create and messages.stream
 * (finalMessage) against the sandbox model, a whole tool loop (tools → tool_use → tool_result → text),
 * stop_sequences, translation for an OpenAI-compatible upstream (the OpenAI fake) and passthrough to an
 * Anthropic upstream (the Anthropic fake), count_tokens, the models list, x-api-key and Bearer auth,
 * Anthropic's error shapes (401, 403, 400 naming the field, 404, 429 with Retry-After, an upstream's 400, a
 * mid-stream `error` event), and the usage rows and history records the calls leave.
 */
import { readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import Ajv from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIFake } from './fakes/openai-fake.js';
import { startAnthropicFake } from './fakes/anthropic-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { awayFromWindowEnd } from './helpers/limit-windows.js';

let openaiUp: FakeVendor;
let anthropicUp: FakeVendor;
let t: TestServer;
let session: string;
let key: string;

const ajv = new Ajv.default({ strict: false, allErrors: true });
const client = (opts: { apiKey?: string | null; authToken?: string | null } = {}) =>
  new Anthropic({ baseURL: `${t.url}/anthropic`, maxRetries: 0, apiKey: opts.apiKey === undefined ? key : opts.apiKey, authToken: opts.authToken ?? null });

const WEATHER = {
  type: 'object' as const,
  properties: { city: { type: 'string', minLength: 2 }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] }, days: { type: 'integer', minimum: 1, maximum: 7 } },
  required: ['city', 'unit', 'days'],
  additionalProperties: false,
};
const tools: Anthropic.Tool[] = [
  { name: 'get_weather', description: 'The forecast for a city', input_schema: WEATHER },
  { name: 'search_docs', input_schema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } },
];
const ask: Anthropic.MessageParam = { role: 'user', content: 'What is the weather in Paris this week?' };

async function makeKey(body: Record<string, unknown> = {}) {
  const res = await request(`${t.url}/api/v1/api-keys`, { token: session, body: { name: 'claude', ...body } });
  expect(res.status, res.text).toBe(201);
  return res.body.key as string;
}

/** A raw Messages API call (for what the SDK hides: the SSE event order, headers). */
function post(path: string, body: unknown, headers: Record<string, string> = { 'x-api-key': key, 'anthropic-version': '2023-06-01' }) {
  return fetch(`${t.url}/anthropic/v1/${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

/** The events of a streamed answer, as [event, data] pairs; each data's `type` must be its event's name. */
async function rawEvents(body: Record<string, unknown>): Promise<Array<[string, any]>> {
  const res = await post('messages', { ...body, stream: true });
  expect(res.status, await res.clone().text()).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const frames = (await res.text()).split('\n\n').filter(Boolean);
  return frames.map((f) => {
    const [event, data] = f.split('\n');
    expect(event).toMatch(/^event: /);
    expect(data).toMatch(/^data: /);
    const name = event!.slice('event: '.length);
    const parsed = JSON.parse(data!.slice('data: '.length));
    expect(parsed.type).toBe(name);
    return [name, parsed];
  });
}

beforeAll(async () => {
  openaiUp = await startOpenAIFake();
  anthropicUp = await startAnthropicFake();
  t = await startTestServer({
    env: {
      OPENAI_BASE_URL: `${openaiUp.url}/v1`, OPENAI_API_KEY: 'sk-up', CODELOOM_OPENAI_MODELS: 'gpt-test',
      ANTHROPIC_BASE_URL: anthropicUp.url, ANTHROPIC_API_KEY: 'sk-ant-up', CODELOOM_ANTHROPIC_MODELS: 'claude-test',
      CODELOOM_DEFAULT_MODEL: 'sandbox', CODELOOM_UPSTREAM_RETRIES: '0', CODELOOM_MODEL_PRICES: JSON.stringify({ 'gpt-test': { input: 100, output: 1_000 } }),
      CODELOOM_MODEL_FALLBACKS: 'claude-test=sandbox',
    },
  });
  ({ token: session } = await registerUser(t.url, { ip: nextIp() }));
  key = await makeKey();
}, 60_000);
afterAll(async () => { await t?.close(); await openaiUp?.close(); await anthropicUp?.close(); });

describe('messages against the sandbox model', () => {
  it('messages.create answers Anthropic\'s message object, with x-api-key; recorded in history under the same id', async () => {
    const res = await client().messages.create({ model: 'sandbox', max_tokens: 4000, system: 'You write TypeScript.', messages: [{ role: 'user', content: 'a function that adds two numbers' }] }).withResponse();
    const msg = res.data;
    expect(msg).toMatchObject({ id: expect.stringMatching(/^msg_/), type: 'message', role: 'assistant', model: 'sandbox', stop_reason: 'end_turn', stop_sequence: null });
    expect(msg.content).toHaveLength(1);
    expect(msg.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('function') });
    expect(msg.usage.input_tokens).toBeGreaterThan(0);
    expect(msg.usage.output_tokens).toBeGreaterThan(0);
    // The SDK's request id is Codeloom's.
    expect(res.request_id).toBeTruthy();
    expect(res.request_id).toBe(res.response.headers.get('x-request-id'));
    const history = await request(`${t.url}/api/v1/generations/gen_${msg.id.slice('msg_'.length)}`, { token: session });
    expect(history.status, history.text).toBe(200);
    expect(history.body).toMatchObject({ model: 'sandbox', output: (msg.content[0] as Anthropic.TextBlock).text, usage: { prompt_tokens: msg.usage.input_tokens, completion_tokens: msg.usage.output_tokens } });
  });

  it('the SDK\'s beta paths (?beta=true, as Claude Code calls them) are the same routes', async () => {
    const msg = await client().beta.messages.create({ model: 'sandbox', max_tokens: 50, messages: [{ role: 'user', content: 'hello' }] });
    expect(msg).toMatchObject({ type: 'message', model: 'sandbox' });
    const counted = await client().beta.messages.countTokens({ model: 'sandbox', messages: [{ role: 'user', content: 'hello' }] });
    expect(counted.input_tokens).toBe(msg.usage.input_tokens);
  });

  it('Authorization: Bearer works as well as x-api-key (the SDK\'s authToken, Claude Code\'s ANTHROPIC_AUTH_TOKEN)', async () => {
    const msg = await client({ apiKey: null, authToken: key }).messages.create({ model: 'sandbox', max_tokens: 50, messages: [{ role: 'user', content: 'hello' }] });
    expect(msg.type).toBe('message');
    // A session token is a credential too.
    const bySession = await client({ apiKey: session }).messages.create({ model: 'sandbox', max_tokens: 50, messages: [{ role: 'user', content: 'hello' }] });
    expect(bySession.content).toEqual(msg.content);
  });

  it('messages.stream gives the same message as messages.create; finalMessage() and text events', async () => {
    const params = { model: 'sandbox', max_tokens: 4000, messages: [{ role: 'user' as const, content: 'a python function that reverses a string' }] };
    const whole = await client().messages.create(params);
    const pieces: string[] = [];
    const stream = client().messages.stream(params).on('text', (text) => pieces.push(text));
    const final = await stream.finalMessage();
    expect(pieces.length).toBeGreaterThan(3);
    expect(pieces.join('')).toBe((whole.content[0] as Anthropic.TextBlock).text);
    expect(final.content).toEqual(whole.content);
    expect(final).toMatchObject({ id: expect.stringMatching(/^msg_/), model: 'sandbox', stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: whole.usage.input_tokens, output_tokens: whole.usage.output_tokens } });
  });

  it('streams the events in Anthropic\'s order: message_start, content_block_start, ping, deltas, content_block_stop, message_delta, message_stop', async () => {
    const events = await rawEvents({ model: 'sandbox', max_tokens: 100, messages: [{ role: 'user', content: 'a go function that prints hello' }] });
    const names = events.map(([e]) => e);
    expect(names.slice(0, 3)).toEqual(['message_start', 'content_block_start', 'ping']);
    expect(names.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    expect(new Set(names.slice(3, -3))).toEqual(new Set(['content_block_delta']));
    const start = events[0]![1];
    expect(start.message).toMatchObject({ id: expect.stringMatching(/^msg_/), type: 'message', role: 'assistant', model: 'sandbox', content: [], stop_reason: null, stop_sequence: null, usage: { output_tokens: 0 } });
    // The sandbox knows its prompt's tokens before it answers.
    expect(start.message.usage.input_tokens).toBeGreaterThan(0);
    expect(events[1]![1]).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    for (const [, d] of events.slice(3, -3)) expect(d).toEqual({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: expect.any(String) } });
    const delta = events.at(-2)![1];
    expect(delta).toMatchObject({ delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: 100, input_tokens: start.message.usage.input_tokens } });
  });

  it('stop_sequences: the answer ends before the first one found, stop_reason "stop_sequence" naming it (JSON and streamed)', async () => {
    const params = { model: 'sandbox', max_tokens: 1000, messages: [{ role: 'user' as const, content: 'a typescript function that adds two numbers' }] };
    const full = (await client().messages.create(params)).content[0] as Anthropic.TextBlock;
    const word = full.text.split(/\s+/).filter((w) => w.length > 3)[5]!;
    const cut = await client().messages.create({ ...params, stop_sequences: ['@@never@@', word] });
    expect(cut).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: word });
    expect((cut.content[0] as Anthropic.TextBlock).text).toBe(full.text.slice(0, full.text.indexOf(word)));
    const streamed = await client().messages.stream({ ...params, stop_sequences: [word] }).finalMessage();
    expect(streamed).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: word, content: cut.content });
  });

  it('a tool loop: tools → tool_use with schema-valid input (stop_reason tool_use) → tool_result → text', async () => {
    const first = await client().messages.create({ model: 'sandbox', max_tokens: 500, messages: [ask], tools });
    expect(first.stop_reason).toBe('tool_use');
    expect(first.content).toHaveLength(1);
    const use = first.content[0] as Anthropic.ToolUseBlock;
    expect(use).toMatchObject({ type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'get_weather' });
    expect(ajv.validate(WEATHER, use.input), JSON.stringify(ajv.errors)).toBe(true);

    const second = await client().messages.create({
      model: 'sandbox', max_tokens: 500, tools,
      messages: [ask, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: [{ type: 'text', text: '{"forecast":"sunny","high":24}' }] }] }],
    });
    expect(second.stop_reason).toBe('end_turn');
    expect(second.content).toEqual([{ type: 'text', text: expect.stringContaining('The get_weather tool returned: {"forecast":"sunny","high":24}') }]);

    // tool_choice names the tool; "none" answers in text.
    const named = await client().messages.create({ model: 'sandbox', max_tokens: 500, messages: [ask], tools, tool_choice: { type: 'tool', name: 'search_docs' } });
    expect(named.content[0]).toMatchObject({ type: 'tool_use', name: 'search_docs', input: { query: expect.any(String) } });
    const none = await client().messages.create({ model: 'sandbox', max_tokens: 50, messages: [ask], tools, tool_choice: { type: 'none' } });
    expect(none.content[0]!.type).toBe('text');
  });

  it('streams a tool_use block as input_json_delta pieces; finalMessage() has the same input as messages.create', async () => {
    const whole = await client().messages.create({ model: 'sandbox', max_tokens: 500, messages: [ask], tools });
    const final = await client().messages.stream({ model: 'sandbox', max_tokens: 500, messages: [ask], tools }).finalMessage();
    expect(final.content).toEqual(whole.content);
    expect(final.stop_reason).toBe('tool_use');
    const events = await rawEvents({ model: 'sandbox', max_tokens: 500, messages: [ask], tools });
    expect(events[1]![1]).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: (whole.content[0] as Anthropic.ToolUseBlock).id, name: 'get_weather', input: {} } });
    const deltas = events.filter(([e]) => e === 'content_block_delta').map(([, d]) => d);
    expect(deltas.length).toBeGreaterThan(3);
    for (const d of deltas) expect(d).toEqual({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: expect.any(String) } });
    expect(JSON.parse(deltas.map((d) => d.delta.partial_json).join(''))).toEqual((whole.content[0] as Anthropic.ToolUseBlock).input);
    expect(events.at(-2)![1].delta).toEqual({ stop_reason: 'tool_use', stop_sequence: null });
  });
});

describe('a request shaped as Claude Code sends it', () => {
  // System and text blocks with cache_control, tools with draft-07 schemas, metadata.user_id, temperature 1,
  // max_tokens 32000, streamed; then the tool_result turn.
  const bash = {
    name: 'Bash', description: 'Executes a given bash command in a persistent shell session.',
    input_schema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', additionalProperties: false, required: ['command'],
      properties: { command: { type: 'string', description: 'The command to execute' }, timeout: { type: 'number' }, description: { type: 'string' }, run_in_background: { type: 'boolean' } } },
  };
  const read = { name: 'Read', description: 'Reads a file.', input_schema: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'], additionalProperties: false } };
  const body = (messages: unknown[]) => ({
    model: 'sandbox', max_tokens: 32000, temperature: 1, stream: true,
    metadata: { user_id: `user_${'a'.repeat(64)}_account_00000000-0000-4000-8000-000000000000_session_00000000-0000-4000-8000-000000000001` },
    system: [{ type: 'text', text: 'You are Claude Code, Anthropic\'s official CLI for Claude.', cache_control: { type: 'ephemeral' } }, { type: 'text', text: 'You are an interactive CLI tool that helps users with software engineering tasks.', cache_control: { type: 'ephemeral' } }],
    tools: [bash, { ...read, cache_control: { type: 'ephemeral' } }],
    messages,
  });

  it('is served: a Bash tool_use with schema-valid input, then text after the tool_result', async () => {
    const first = [{ role: 'user', content: [{ type: 'text', text: '<system-reminder>This is a reminder.</system-reminder>' }, { type: 'text', text: 'list the files here', cache_control: { type: 'ephemeral' } }] }];
    const events = await rawEvents(body(first));
    const final = await client().messages.stream(body(first) as any).finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    const use = final.content[0] as Anthropic.ToolUseBlock;
    expect(use).toMatchObject({ type: 'tool_use', name: 'Bash' });
    expect(ajv.validate(bash.input_schema, use.input), JSON.stringify(ajv.errors)).toBe(true);
    expect(events.at(-1)![0]).toBe('message_stop');
    const second = await client().messages.stream(body([...first, { role: 'assistant', content: final.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'README.md\npackage.json', is_error: false }] }]) as any).finalMessage();
    expect(second.stop_reason).toBe('end_turn');
    expect((second.content[0] as Anthropic.TextBlock).text).toContain('README.md');
  });
});

describe('other back-ends', () => {
  it('an OpenAI-compatible upstream: system, tools and tool_choice translated; its tool call is a tool_use block whose id comes back in the tool_result', async () => {
    openaiUp.reset();
    openaiUp.script({ reply: '', toolCalls: [{ id: 'call_up1', name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius","days":3}' }] });
    const first = await client().messages.create({ model: 'gpt-test', max_tokens: 200, system: [{ type: 'text', text: 'Be brief.' }], messages: [ask], tools, tool_choice: { type: 'any', disable_parallel_tool_use: true } });
    expect(first).toMatchObject({ model: 'gpt-test', stop_reason: 'tool_use', content: [{ type: 'tool_use', id: 'toolu_up1', name: 'get_weather', input: { city: 'Paris', unit: 'celsius', days: 3 } }] });
    const sent = openaiUp.requests.at(-1)!.body;
    expect(sent.messages[0]).toEqual({ role: 'system', content: 'Be brief.' });
    expect(sent.tools[0]).toMatchObject({ type: 'function', function: { name: 'get_weather', parameters: WEATHER } });
    expect(sent.tool_choice).toBe('required');
    expect(sent.parallel_tool_calls).toBe(false);

    openaiUp.script({ toolCalls: [], reply: 'Sunny, 24 degrees.' });
    const second = await client().messages.create({
      model: 'gpt-test', max_tokens: 200, tools,
      messages: [ask, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_up1', content: 'sunny' }, { type: 'text', text: 'Summarise.' }] }],
    });
    expect(second).toMatchObject({ stop_reason: 'end_turn', content: [{ type: 'text', text: 'Sunny, 24 degrees.' }] });
    const again = openaiUp.requests.at(-1)!.body.messages;
    expect(again.slice(1)).toEqual([
      expect.objectContaining({ role: 'assistant', tool_calls: [{ id: 'toolu_up1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius","days":3}' } }] }),
      { role: 'tool', tool_call_id: 'toolu_up1', content: 'sunny' },
      { role: 'user', content: 'Summarise.' },
    ]);
    // Streamed through the translation too.
    openaiUp.script({ reply: 'streamed answer' });
    const streamed = await client().messages.stream({ model: 'gpt-test', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    expect(streamed).toMatchObject({ model: 'gpt-test', content: [{ type: 'text', text: 'streamed answer' }], stop_reason: 'end_turn' });
  });

  it('parallel tool calls from an OpenAI-compatible upstream are one tool_use block each, JSON and streamed', async () => {
    openaiUp.reset();
    openaiUp.script({ reply: '', toolCalls: [{ id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius","days":1}' }, { id: 'call_b', name: 'search_docs', arguments: '{"query":"umbrella"}' }] });
    const want = [
      { type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: { city: 'Paris', unit: 'celsius', days: 1 } },
      { type: 'tool_use', id: 'toolu_b', name: 'search_docs', input: { query: 'umbrella' } },
    ];
    const json = await client().messages.create({ model: 'gpt-test', max_tokens: 200, messages: [ask], tools });
    expect(json).toMatchObject({ stop_reason: 'tool_use', content: want });
    const streamed = await client().messages.stream({ model: 'gpt-test', max_tokens: 200, messages: [ask], tools }).finalMessage();
    expect(streamed).toMatchObject({ stop_reason: 'tool_use', content: want });
    const events = await rawEvents({ model: 'gpt-test', max_tokens: 200, messages: [ask], tools });
    expect(events.filter(([e]) => e === 'content_block_start').map(([, d]) => [d.index, d.content_block.id])).toEqual([[0, 'toolu_a'], [1, 'toolu_b']]);
    expect(events.filter(([e]) => e === 'content_block_stop').map(([, d]) => d.index)).toEqual([0, 1]);
    openaiUp.reset();
  });

  it('top_k on a model that cannot take it is a 400 naming top_k; an Anthropic upstream takes it', async () => {
    const refused = await client().messages.create({ model: 'gpt-test', max_tokens: 10, top_k: 5, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    expect((refused as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('top_k') } });
    anthropicUp.reset();
    await client().messages.create({ model: 'claude-test', max_tokens: 10, top_k: 5, temperature: 0.2, messages: [{ role: 'user', content: 'hi' }] });
    expect(anthropicUp.requests.at(-1)!.body).toMatchObject({ top_k: 5, temperature: 0.2, max_tokens: 10 });
  });

  it('an Anthropic upstream: tools, tool_use and tool_result (with is_error) carried through; its tool_use streamed back', async () => {
    anthropicUp.reset();
    anthropicUp.script({ reply: '', toolCalls: [{ id: 'toolu_up2', name: 'search_docs', arguments: '{"query":"fastify hooks"}' }] });
    const first = await client().messages.create({ model: 'claude-test', max_tokens: 200, system: 'Use tools.', messages: [ask], tools, tool_choice: { type: 'tool', name: 'search_docs' } });
    expect(first).toMatchObject({ model: 'claude-test', stop_reason: 'tool_use', content: [{ type: 'tool_use', id: 'toolu_up2', name: 'search_docs', input: { query: 'fastify hooks' } }] });
    const sent = anthropicUp.requests.at(-1)!.body;
    expect(sent).toMatchObject({ system: 'Use tools.', tool_choice: { type: 'tool', name: 'search_docs' }, tools: [{ name: 'get_weather', input_schema: WEATHER }, { name: 'search_docs' }] });

    anthropicUp.script({ toolCalls: [], reply: 'No results, sorry.' });
    const second = await client().messages.stream({
      model: 'claude-test', max_tokens: 200, tools,
      messages: [ask, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_up2', content: 'index offline', is_error: true }] }],
    }).finalMessage();
    expect(second).toMatchObject({ model: 'claude-test', stop_reason: 'end_turn', content: [{ type: 'text', text: 'No results, sorry.' }] });
    expect(anthropicUp.requests.at(-1)!.body.messages.slice(1)).toEqual([
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_up2', name: 'search_docs', input: { query: 'fastify hooks' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_up2', content: 'index offline', is_error: true }] },
    ]);

    anthropicUp.script({ reply: '', toolCalls: [{ id: 'toolu_up3', name: 'get_weather', arguments: '{"city":"Oslo","unit":"celsius","days":2}' }] });
    const streamed = await client().messages.stream({ model: 'claude-test', max_tokens: 200, messages: [ask], tools }).finalMessage();
    expect(streamed).toMatchObject({ stop_reason: 'tool_use', content: [{ type: 'tool_use', id: 'toolu_up3', name: 'get_weather', input: { city: 'Oslo', unit: 'celsius', days: 2 } }] });
    anthropicUp.script({ toolCalls: [] });
  });

  it('an upstream\'s 400 stays a 400 invalid_request_error; a failure after the first output is an `error` event', async () => {
    anthropicUp.reset();
    anthropicUp.script({ failNext: { count: 1, status: 400, message: 'prompt is too long: 300000 tokens > 200000 maximum' } });
    const rejected = await client().messages.create({ model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(rejected).toBeInstanceOf(Anthropic.BadRequestError);
    expect((rejected as InstanceType<typeof Anthropic.BadRequestError>).error.error).toMatchObject({ type: 'invalid_request_error', message: expect.stringContaining('prompt is too long') });

    anthropicUp.script({ reply: 'one two three four five six', chunks: ['one ', 'two ', 'three ', 'four ', 'five ', 'six'], errorAfterChunks: 2 });
    const events = await rawEvents({ model: 'claude-test', max_tokens: 100, messages: [{ role: 'user', content: 'count' }] });
    expect(events.map(([e]) => e)).toContain('content_block_delta');
    expect(events.at(-1)![0]).toBe('error');
    expect(events.at(-1)![1]).toMatchObject({ type: 'error', error: { type: expect.any(String), message: expect.any(String) } });
    expect(events.map(([e]) => e)).not.toContain('message_stop');
    const failed = await client().messages.stream({ model: 'claude-test', max_tokens: 100, messages: [{ role: 'user', content: 'count' }] }).finalMessage().catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(Anthropic.APIError);
    anthropicUp.reset();
  });
});

describe('count_tokens and models', () => {
  it('count_tokens: the sandbox\'s exact count (what messages.create then reports); an upper bound for other models', async () => {
    const params = { model: 'sandbox', system: 'You write Go.', messages: [ask], tools };
    const counted = await client().messages.countTokens(params);
    const made = await client().messages.create({ ...params, max_tokens: 500 });
    expect(counted).toEqual({ input_tokens: made.usage.input_tokens });
    anthropicUp.reset();
    anthropicUp.script({ usage: { promptTokens: 30, completionTokens: 5 } });
    const bound = await client().messages.countTokens({ model: 'claude-test', messages: [ask] });
    const real = await client().messages.create({ model: 'claude-test', max_tokens: 10, messages: [ask] });
    expect(real.usage.input_tokens).toBe(30);
    expect(bound.input_tokens).toBeGreaterThanOrEqual(Buffer.byteLength('What is the weather in Paris this week?'));
    anthropicUp.reset();
  });

  it('models.list and models.retrieve answer Anthropic\'s shapes; an unknown model is 404 not_found_error', async () => {
    const page = await client().models.list();
    expect(page.data.map((m) => m.id).sort()).toEqual(['claude-test', 'gpt-test', 'sandbox']);
    for (const m of page.data) expect(m).toMatchObject({ type: 'model', display_name: m.id, created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/) });
    const raw = await request(`${t.url}/anthropic/v1/models?limit=1`, { headers: { 'x-api-key': key } });
    expect(raw.body).toEqual({ data: [raw.body.data[0]], has_more: true, first_id: raw.body.data[0].id, last_id: raw.body.data[0].id });
    const all: string[] = [];
    for await (const m of client().models.list({ limit: 1 })) all.push(m.id);
    expect(all.sort()).toEqual(['claude-test', 'gpt-test', 'sandbox']);
    expect(await client().models.retrieve('sandbox')).toMatchObject({ type: 'model', id: 'sandbox' });
    const missing = await client().models.retrieve('claude-nope').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(Anthropic.NotFoundError);
    expect((missing as InstanceType<typeof Anthropic.NotFoundError>).error).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    const unknown = await client().messages.create({ model: 'claude-nope', max_tokens: 5, messages: [ask] }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(Anthropic.NotFoundError);
  });
});

describe('errors in Anthropic\'s shape', () => {
  it('401 authentication_error without a credential or with a bad one', async () => {
    const none = await post('messages', { model: 'sandbox', max_tokens: 5, messages: [ask] }, { 'anthropic-version': '2023-06-01' });
    expect(none.status).toBe(401);
    const body = await none.json();
    expect(body).toEqual({ type: 'error', error: { type: 'authentication_error', message: expect.stringContaining('x-api-key') }, request_id: none.headers.get('request-id') });
    const bad = await client({ apiKey: 'cl_live_notarealkey' }).messages.create({ model: 'sandbox', max_tokens: 5, messages: [ask] }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((bad as InstanceType<typeof Anthropic.AuthenticationError>).error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    // x-api-key is read only under /anthropic.
    const elsewhere = await fetch(`${t.url}/openai/v1/models`, { headers: { 'x-api-key': key } });
    expect(elsewhere.status).toBe(401);
  });

  it('403 permission_error for a key without write:code', async () => {
    const readOnly = await makeKey({ scopes: ['read:code'] });
    const refused = await client({ apiKey: readOnly }).messages.create({ model: 'sandbox', max_tokens: 5, messages: [ask] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect((refused as InstanceType<typeof Anthropic.PermissionDeniedError>).error).toMatchObject({ type: 'error', error: { type: 'permission_error' } });
    expect((await client({ apiKey: readOnly }).models.list()).data.length).toBe(3);
  });

  it('400 invalid_request_error naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ model: 'sandbox', messages: [ask] }, 'max_tokens: Field required'],
      [{ max_tokens: 5, messages: [ask] }, 'model: Field required'],
      [{ model: 'sandbox', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }] }] }, 'messages.0.content.1.type: image blocks are not supported'],
      [{ model: 'sandbox', max_tokens: 5, messages: [{ role: 'system', content: 'x' }] }, 'messages.0.role'],
      [{ model: 'sandbox', max_tokens: 5, messages: [ask], frequency_penalty: 1 }, 'frequency_penalty: is not a known field'],
      [{ model: 'sandbox', max_tokens: 5, messages: [ask], thinking: { type: 'enabled', budget_tokens: 2000 } }, 'thinking.type'],
      [{ model: 'sandbox', max_tokens: 5, messages: [ask], tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, 'tools.0.type'],
      [{ model: 'sandbox', max_tokens: 5, messages: [ask], tools, tool_choice: { type: 'tool', name: 'nope' } }, 'tool_choice.name'],
      [{ model: 'sandbox', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'tool_use', id: 'x', name: 'y', input: {} }] }] }, 'messages.0.content.0.type: tool_use blocks are only allowed in assistant messages'],
      [{ model: 'sandbox', max_tokens: 5, messages: [ask], temperature: 1.5 }, 'temperature'],
    ];
    for (const [body, field] of cases) {
      const res = await post('messages', body);
      const text = await res.text();
      expect(res.status, text).toBe(400);
      const parsed = JSON.parse(text);
      expect(parsed, JSON.stringify(body)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining(field) } });
    }
    const sdk = await client().messages.create({ model: 'sandbox', messages: [ask] } as any).catch((e: unknown) => e);
    expect(sdk).toBeInstanceOf(Anthropic.BadRequestError);
    const version = await post('messages', { model: 'sandbox', max_tokens: 5, messages: [ask] }, { 'x-api-key': key, 'anthropic-version': 'latest' });
    expect(version.status).toBe(400);
    expect((await version.json()).error.message).toContain('anthropic-version');
    // Without anthropic-version the call is served (docs/anthropic.md).
    expect((await post('messages', { model: 'sandbox', max_tokens: 5, messages: [ask] }, { 'x-api-key': key })).status).toBe(200);
    // A known route with the wrong method: 405 with Allow, in Anthropic's shape.
    const method = await fetch(`${t.url}/anthropic/v1/messages`, { headers: { 'x-api-key': key } });
    expect(method.status).toBe(405);
    expect(method.headers.get('allow')).toBe('POST');
    expect(await method.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    // A routing failure (bad percent-encoding) under /anthropic too.
    const encoding = await fetch(`${t.url}/anthropic/v1/models/%E0%A4%A`, { headers: { 'x-api-key': key } });
    expect(encoding.status).toBe(400);
    expect(await encoding.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.any(String) } });
    // Unknown routes under /anthropic answer in Anthropic's shape too.
    const route = await post('complete', { prompt: 'x' });
    expect(route.status).toBe(404);
    expect(await route.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
  });

  it('429 rate_limit_error with Retry-After (a key with requests_per_minute 2)', async () => {
    await awayFromWindowEnd();
    const limited = client({ apiKey: await makeKey({ requests_per_minute: 2 }) });
    await limited.models.list();
    await limited.models.list();
    const refused = await limited.messages.create({ model: 'sandbox', max_tokens: 5, messages: [ask] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.RateLimitError);
    const e = refused as InstanceType<typeof Anthropic.RateLimitError>;
    expect(e.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', message: expect.stringMatching(/per-minute limit of 2 requests/) } });
    expect(Number(e.headers?.get('retry-after'))).toBeGreaterThan(0);
  });
});

/** A JSON value's shape: its keys (sorted) and the types of its leaves; arrays keep their elements' shapes in order. */
const shape = (v: unknown): unknown => (v === null ? 'null' : Array.isArray(v) ? v.map(shape)
  : typeof v === 'object' ? Object.fromEntries(Object.entries(v as object).sort(([a], [b]) => a.localeCompare(b)).map(([k, x]) => [k, shape(x)])) : typeof v);
const fixture = (name: string) => readFileSync(new URL(`./conformance/fixtures/${name}`, import.meta.url), 'utf8');
/** The events of a recorded stream as [event, data]. */
const recordedEvents = (name: string): Array<[string, any]> => fixture(name).replace(/\r\n/g, '\n').split('\n\n').filter((f) => f.trim()).map((f) => {
  const lines = f.split('\n');
  return [lines.find((l) => l.startsWith('event: '))!.slice(7), JSON.parse(lines.find((l) => l.startsWith('data: '))!.slice(6))];
});

describe('the same shapes as Anthropic\'s recorded answers (test/conformance/fixtures)', () => {
  it('a message with text and a tool_use block, and one ended by a stop sequence', async () => {
    anthropicUp.reset();
    anthropicUp.script({ reply: 'I\'ll look up the weather in Paris.', toolCalls: [{ id: 'toolu_x', name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' }] });
    const ours = await client().messages.create({ model: 'claude-test', max_tokens: 200, messages: [ask], tools });
    expect(shape(ours)).toEqual(shape(JSON.parse(fixture('anthropic-messages-tool-use.json'))));
    anthropicUp.reset();
    const params = { model: 'sandbox', max_tokens: 1000, messages: [{ role: 'user' as const, content: 'a python function that greets' }] };
    const full = (await client().messages.create(params)).content[0] as Anthropic.TextBlock;
    const stopped = await client().messages.create({ ...params, stop_sequences: [full.text.split(/\s+/).filter((w) => w.length > 3)[3]!] });
    expect(shape(stopped)).toEqual(shape(JSON.parse(fixture('anthropic-messages-stop-sequence.json'))));
  });

  it('a stream with a text block then a tool_use block: the same events, each of a recorded shape', async () => {
    anthropicUp.reset();
    anthropicUp.script({ reply: 'I\'ll look up the weather in Paris.', toolCalls: [{ id: 'toolu_x', name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' }] });
    const ours = await rawEvents({ model: 'claude-test', max_tokens: 200, messages: [ask], tools });
    anthropicUp.reset();
    const recorded = recordedEvents('anthropic-messages-tool-use-stream.sse');
    expect(ours.map(([e]) => e).filter((e, i, all) => all.indexOf(e) === i)).toEqual(recorded.map(([e]) => e).filter((e, i, all) => all.indexOf(e) === i));
    const known = new Set(recorded.map(([, d]) => JSON.stringify(shape(d))));
    for (const [event, data] of ours) {
      // message_delta also carries the final input_tokens (Anthropic's newer answers do; message_start had 0 for a model that counts only at the end).
      const comparable = event === 'message_delta' ? { ...data, usage: { output_tokens: data.usage.output_tokens } } : data;
      expect(known.has(JSON.stringify(shape(comparable))), `${event} ${JSON.stringify(data)}`).toBe(true);
    }
    // A failure after output: an `error` event as Anthropic sends it.
    anthropicUp.script({ reply: 'one two three', chunks: ['one ', 'two ', 'three'], errorAfterChunks: 1 });
    const failed = await rawEvents({ model: 'claude-test', max_tokens: 100, messages: [ask] });
    anthropicUp.reset();
    const recordedError = recordedEvents('anthropic-messages-stream-midstream-error.sse').find(([e]) => e === 'error')!;
    expect(shape(failed.at(-1)![1])).toEqual(shape(recordedError[1]));
  });

  it('an error answer: the recorded body\'s shape, with request-id', async () => {
    const ours = await post('messages', { model: 'sandbox', messages: [ask] });
    const [head, body] = fixture('anthropic-error-400.http').replace(/\r\n/g, '\n').split('\n\n');
    expect(head).toMatch(/^HTTP\/1\.1 400/);
    expect(ours.status).toBe(400);
    expect(ours.headers.get('content-type')).toMatch(/^application\/json/);
    expect(ours.headers.get('request-id')).toBeTruthy();
    expect(shape(await ours.json())).toEqual(shape(JSON.parse(body!)));
  });
});

describe('limits and budgets', () => {
  it('a dollar budget that would be crossed is a 429 rate_limit_error with Retry-After (budget_exceeded)', async () => {
    const made = await request(`${t.url}/api/v1/api-keys`, { token: session, body: { name: 'budgeted' } });
    expect(made.status, made.text).toBe(201);
    // A call reserves its prompt's bound at $100 and 50 tokens at $1,000 per million (about $0.058): the first fits
    // $0.06 and is charged what it used ($0.012 for 20 + 10 tokens); the second no longer fits.
    const budget = await request(`${t.url}/api/v1/budgets`, { token: session, body: { scope: { type: 'api_key', id: made.body.id }, amount_usd: 0.06, period: 'month' } });
    expect(budget.status, budget.text).toBe(201);
    openaiUp.reset();
    openaiUp.script({ usage: { promptTokens: 20, completionTokens: 10 } });
    await client({ apiKey: made.body.key }).messages.create({ model: 'gpt-test', max_tokens: 50, messages: [ask] });
    const refused = await client({ apiKey: made.body.key }).messages.create({ model: 'gpt-test', max_tokens: 50, messages: [ask] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.RateLimitError);
    const e = refused as InstanceType<typeof Anthropic.RateLimitError>;
    expect(e.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', message: expect.stringMatching(/budget/i) } });
    expect(Number(e.headers?.get('retry-after'))).toBeGreaterThan(0);
    // The sandbox model costs nothing: the same key is served there.
    expect((await client({ apiKey: made.body.key }).messages.create({ model: 'sandbox', max_tokens: 20, messages: [ask] })).type).toBe('message');
  });

  it('fallbacks: an Anthropic upstream that fails before any output is replaced by its fallback (the answer names it), JSON and streamed', async () => {
    anthropicUp.reset();
    anthropicUp.script({ failNext: { count: 2, status: 500 } });
    const json = await client().messages.create({ model: 'claude-test', max_tokens: 30, messages: [ask] });
    expect(json.model).toBe('sandbox');
    const events = await rawEvents({ model: 'claude-test', max_tokens: 30, messages: [ask] });
    expect(events[0]![1].message.model).toBe('sandbox');
    expect(anthropicUp.requests).toHaveLength(2);
    anthropicUp.reset();
    const history = await request(`${t.url}/api/v1/generations/gen_${json.id.slice(4)}`, { token: session });
    expect(history.body.model).toBe('sandbox');
  });

  it('an upstream 429 that outlasts Codeloom\'s retries is a 429 rate_limit_error with the upstream\'s Retry-After', async () => {
    openaiUp.reset();
    openaiUp.script({ failNext: { count: 5, status: 429, retryAfter: 7 } });
    const refused = await client().messages.create({ model: 'gpt-test', max_tokens: 20, messages: [ask] }).catch((e: unknown) => e);
    openaiUp.reset();
    expect(refused).toBeInstanceOf(Anthropic.RateLimitError);
    const e = refused as InstanceType<typeof Anthropic.RateLimitError>;
    expect(e.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    expect(e.headers?.get('retry-after')).toBe('7');
  });
});

describe('accounting', () => {
  it('every call leaves a usage row per model (GET /api/v1/usage) and OpenAPI documents the routes', async () => {
    const perModel = async () => {
      const res = await request(`${t.url}/api/v1/usage?group_by=model`, { token: session });
      expect(res.status, res.text).toBe(200);
      return Object.fromEntries(res.body.data.map((r: any) => [r.model, r.requests])) as Record<string, number>;
    };
    const before = await perModel();
    await client().messages.create({ model: 'sandbox', max_tokens: 20, messages: [ask] });
    await client().messages.stream({ model: 'sandbox', max_tokens: 20, messages: [ask] }).finalMessage();
    anthropicUp.reset();
    await client().messages.create({ model: 'claude-test', max_tokens: 20, messages: [ask] });
    openaiUp.reset();
    await client().messages.create({ model: 'gpt-test', max_tokens: 20, messages: [ask] });
    // count_tokens calls no model: no row.
    await client().messages.countTokens({ model: 'sandbox', messages: [ask] });
    const after = await perModel();
    expect(after.sandbox! - (before.sandbox ?? 0)).toBe(2);
    expect(after['claude-test']! - (before['claude-test'] ?? 0)).toBe(1);
    expect(after['gpt-test']! - (before['gpt-test'] ?? 0)).toBe(1);

    const doc = (await request(`${t.url}/openapi.json`)).body;
    for (const [path, method] of [['/anthropic/v1/messages', 'post'], ['/anthropic/v1/messages/count_tokens', 'post'], ['/anthropic/v1/models', 'get'], ['/anthropic/v1/models/{model_id}', 'get']] as const) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op.tags).toEqual(['Anthropic-compatible']);
      expect(Object.keys(op.responses['401'].content)).toEqual(['application/json']);
    }
    expect(Object.keys(doc.paths['/anthropic/v1/messages'].post.responses['200'].content).sort()).toEqual(['application/json', 'text/event-stream']);
  });
});
