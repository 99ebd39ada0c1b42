/**
 * OpenAI's Responses API (CONTRACT §12.3, issue 24 item 3) driven by the official `openai` client:
 * `client.responses.create` (JSON and streamed), `client.responses.stream`, `retrieve` and `delete`,
 * `previous_response_id` chains kept per organization, a function-calling loop with `function_call_output`
 * against the sandbox model, structured output (`text.format` json_schema, checked with ajv), errors in OpenAI's
 * shape, and the translation of a Responses request into chat completions for an OpenAI-compatible upstream.
 * On SQLite, and on PostgreSQL when TEST_DATABASE_URL is set.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv from 'ajv';
import fc from 'fast-check';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIFake } from './fakes/openai-fake.js';
import { startAnthropicFake } from './fakes/anthropic-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { startTestServer, nextIp, TEST_DATABASE_URL, uniqueName, type TestServer } from './helpers/test-server.js';
import { dropPgSchema } from './helpers/pg-schema.js';
import { registerUser, request } from './helpers/http.js';
import { hostileJson, hostileString } from './fuzz/hostile-values.js';
import { loadNodeLlamaCpp } from '../src/providers/llama/llama-provider.js';
import { writeTinyGguf } from '../src/providers/llama/tiny-gguf.js';

const llamaInstalled = Boolean(await loadNodeLlamaCpp());

const ajv = new Ajv.default({ strict: false, allErrors: true });

const WEATHER = {
  type: 'object',
  properties: { city: { type: 'string', minLength: 2 }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] }, days: { type: 'integer', minimum: 1, maximum: 7 } },
  required: ['city', 'unit', 'days'],
  additionalProperties: false,
};
const tools: OpenAI.Responses.FunctionTool[] = [
  { type: 'function', name: 'get_weather', description: 'The forecast for a city', parameters: WEATHER, strict: true },
  { type: 'function', name: 'search_docs', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] }, strict: false },
];
const PLAN = {
  type: 'object',
  properties: { title: { type: 'string', minLength: 3 }, steps: { type: 'array', minItems: 2, items: { type: 'string' } }, done: { type: 'boolean' } },
  required: ['title', 'steps', 'done'],
  additionalProperties: false,
};

function responsesSuite(dialect: 'sqlite' | 'postgres') {
  let t: TestServer;
  let up: FakeVendor;
  let anthropicUp: FakeVendor;
  let session: string;
  let key: string;
  let otherKey: string;
  const client = (apiKey = key) => new OpenAI({ apiKey, baseURL: `${t.url}/openai/v1`, maxRetries: 0 });
  /** A key of a new account: upstream calls reserve max_tokens in the account's tokens-per-minute window, so each test gets its own. */
  const freshKey = async () => {
    const { token } = await registerUser(t.url, { ip: nextIp() });
    return (await request(`${t.url}/api/v1/api-keys`, { token, body: { name: 'k' } })).body.key as string;
  };

  beforeAll(async () => {
    up = await startOpenAIFake();
    anthropicUp = await startAnthropicFake();
    const env: Record<string, string> = { OPENAI_BASE_URL: `${up.url}/v1`, OPENAI_API_KEY: 'sk-up', CODELOOM_OPENAI_MODELS: 'gpt-test,gpt-flaky', CODELOOM_MODEL_FALLBACKS: 'gpt-flaky=claude-test', ANTHROPIC_BASE_URL: anthropicUp.url, ANTHROPIC_API_KEY: 'sk-ant-up', CODELOOM_ANTHROPIC_MODELS: 'claude-test', CODELOOM_DEFAULT_MODEL: 'sandbox', CODELOOM_UPSTREAM_RETRIES: '0' };
    if (llamaInstalled) {
      const file = join(mkdtempSync(join(tmpdir(), 'codeloom-gguf-')), 'tiny.gguf');
      await writeTinyGguf(file, { seed: 7 });
      env.CODELOOM_LLAMA_MODEL = file;
    }
    t = await startTestServer({ dialect, env });
    ({ token: session } = await registerUser(t.url, { ip: nextIp() }));
    const res = await request(`${t.url}/api/v1/api-keys`, { token: session, body: { name: 'codex' } });
    expect(res.status, res.text).toBe(201);
    key = res.body.key;
    const other = await registerUser(t.url, { ip: nextIp() });
    const res2 = await request(`${t.url}/api/v1/api-keys`, { token: other.token, body: { name: 'other' } });
    otherKey = res2.body.key;
  }, 60_000);
  afterAll(async () => { await t?.close(); await up?.close(); await anthropicUp?.close(); });

  it('answers a response object exactly as OpenAI shapes it, kept for retrieve; recorded in history and usage', async () => {
    const before = (await request(`${t.url}/api/v1/usage`, { token: session })).body;
    const { data: r, response: http } = await client().responses.create({ model: 'sandbox', input: 'Write a REST API for todos in Python', instructions: 'You write code.', max_output_tokens: 4000, metadata: { ticket: 'T-1' } }).withResponse();
    expect(http.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r).toMatchObject({
      id: expect.stringMatching(/^resp_[0-9a-f]{32}$/), object: 'response', status: 'completed', error: null, incomplete_details: null,
      model: 'sandbox', instructions: 'You write code.', max_output_tokens: 4000, previous_response_id: null, store: true,
      tools: [], tool_choice: 'auto', parallel_tool_calls: true, text: { format: { type: 'text' } }, metadata: { ticket: 'T-1' },
    });
    expect(r.created_at).toBeGreaterThan(1_700_000_000);
    expect(r.output).toHaveLength(1);
    const item = r.output[0] as OpenAI.Responses.ResponseOutputMessage;
    expect(item).toMatchObject({ type: 'message', id: expect.stringMatching(/^msg_/), role: 'assistant', status: 'completed' });
    expect(item.content).toEqual([{ type: 'output_text', text: expect.any(String), annotations: [], logprobs: [] }]);
    // output_text is the SDK's convenience: the server does not send it, the SDK adds it from the items.
    const raw = await (await fetch(`${t.url}/openai/v1/responses/${r.id}`, { headers: { authorization: `Bearer ${key}` } })).json();
    expect(raw).not.toHaveProperty('output_text');
    expect(r.output_text).toBe((item.content[0] as OpenAI.Responses.ResponseOutputText).text);
    expect(r.output_text.length).toBeGreaterThan(20);
    expect(r.usage).toEqual({ input_tokens: expect.any(Number), input_tokens_details: { cached_tokens: 0 }, output_tokens: expect.any(Number), output_tokens_details: { reasoning_tokens: 0 }, total_tokens: r.usage!.input_tokens + r.usage!.output_tokens });
    expect(r.usage!.output_tokens).toBeGreaterThan(0);

    // The same object comes back from retrieve.
    const got = await client().responses.retrieve(r.id);
    expect(got).toEqual(r);

    // The one call path: a generation history record and a usage row, with the response's tokens.
    const history = await request(`${t.url}/api/v1/generations?limit=5`, { token: session });
    expect(history.status).toBe(200);
    expect(history.body.data[0]).toMatchObject({ model: 'sandbox', output: r.output_text, tokens_used: r.usage!.total_tokens, prompt: 'Write a REST API for todos in Python' });
    const after = (await request(`${t.url}/api/v1/usage`, { token: session })).body;
    expect(after.totals.requests).toBe(before.totals.requests + 1);
    expect(after.totals.completion_tokens).toBe(before.totals.completion_tokens + r.usage!.output_tokens);
  });

  it('takes input items: messages with string and input_text/output_text content, system and developer roles', async () => {
    const r = await client().responses.create({
      model: 'sandbox',
      input: [
        { role: 'developer', content: 'Answer briefly.' },
        { role: 'user', content: [{ type: 'input_text', text: 'Write a function that adds two numbers in TypeScript' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Sure.', annotations: [] }] } as any,
        { role: 'user', content: 'Now in Go' },
      ],
    });
    expect(r.status).toBe('completed');
    expect(r.output_text.length).toBeGreaterThan(0);
  });

  it('streams the Responses events in order with sequence numbers; the SDK stream helper assembles the same response', async () => {
    const body = { model: 'sandbox', input: 'CLI tool in Go that counts words', max_output_tokens: 4000 };
    const whole = await client().responses.create(body);
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const e of await client().responses.create({ ...body, stream: true })) events.push(e);
    const types = events.map((e) => e.type);
    expect(types.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    expect(types.slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    expect(types.slice(4, -4).every((x) => x === 'response.output_text.delta')).toBe(true);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const created = events[0] as OpenAI.Responses.ResponseCreatedEvent;
    expect(created.response).toMatchObject({ status: 'in_progress', output: [], usage: null });
    const deltas = events.filter((e): e is OpenAI.Responses.ResponseTextDeltaEvent => e.type === 'response.output_text.delta');
    expect(deltas.map((d) => d.delta).join('')).toBe(whole.output_text);
    const itemId = (events[2] as OpenAI.Responses.ResponseOutputItemAddedEvent).item.id;
    expect(deltas.every((d) => d.item_id === itemId && d.output_index === 0 && d.content_index === 0)).toBe(true);
    const done = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(done.response.id).toBe(created.response.id);
    expect(done.response.output).toEqual([{ type: 'message', id: itemId, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: whole.output_text, annotations: [], logprobs: [] }] }]);
    expect(done.response.usage).toEqual(whole.usage);
    // The raw wire: `event: <type>` then `data: <json>` whose type matches.
    const res = await fetch(`${t.url}/openai/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ ...body, stream: true }) });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const frames = (await res.text()).split('\n\n').filter(Boolean);
    for (const f of frames) {
      const [ev, data] = f.split('\n');
      expect(JSON.parse(data!.replace(/^data: /, '')).type).toBe(ev!.replace(/^event: /, ''));
    }
    // A streamed response is stored like any other.
    expect((await client().responses.retrieve(done.response.id)).output).toEqual(done.response.output);

    // client.responses.stream(): text deltas with snapshots, and the final response.
    const stream = client().responses.stream(body);
    let snapshot = '';
    stream.on('response.output_text.delta', (e) => { snapshot = e.snapshot; });
    const final = await stream.finalResponse();
    expect(final.output_text).toBe(whole.output_text);
    expect(snapshot).toBe(whole.output_text);
  });

  it('previous_response_id continues the stored conversation (its input and output, then the new input); instructions are not carried over', async () => {
    const client = ((k) => () => new OpenAI({ apiKey: k, baseURL: `${t.url}/openai/v1`, maxRetries: 0 }))(await freshKey());
    up.reset();
    up.script({ replies: ['First answer.', 'Second answer.', 'Third answer.'] });
    const first = await client().responses.create({ model: 'gpt-test', instructions: 'Be terse.', input: 'Question one?' });
    expect(first.output_text).toBe('First answer.');
    const second = await client().responses.create({ model: 'gpt-test', previous_response_id: first.id, input: [{ role: 'user', content: 'Question two?' }] });
    expect(second.previous_response_id).toBe(first.id);
    expect(second.instructions).toBeNull();
    const third = await client().responses.create({ model: 'gpt-test', previous_response_id: second.id, instructions: 'Now be kind.', input: 'Question three?' });
    expect(third.output_text).toBe('Third answer.');
    expect(up.requests.map((r) => r.body.messages)).toEqual([
      [{ role: 'system', content: 'Be terse.' }, { role: 'user', content: 'Question one?' }],
      [{ role: 'user', content: 'Question one?' }, { role: 'assistant', content: 'First answer.' }, { role: 'user', content: 'Question two?' }],
      [{ role: 'system', content: 'Now be kind.' }, { role: 'user', content: 'Question one?' }, { role: 'assistant', content: 'First answer.' }, { role: 'user', content: 'Question two?' }, { role: 'assistant', content: 'Second answer.' }, { role: 'user', content: 'Question three?' }],
    ]);
    // Each stored response holds the conversation up to it: deleting an earlier one does not break a later one.
    await client().responses.delete(first.id);
    await client().responses.create({ model: 'gpt-test', previous_response_id: second.id, input: 'Question four?' });
    expect(up.requests[3]!.body.messages.map((m: { content: string }) => m.content)).toEqual(['Question one?', 'First answer.', 'Question two?', 'Second answer.', 'Question four?']);
  });

  it('store: false is answered but not kept; another organization\'s response is a 404; delete answers OpenAI\'s deleted object', async () => {
    const unstored = await client().responses.create({ model: 'sandbox', input: 'Hello', store: false });
    expect(unstored.store).toBe(false);
    const missing = await client().responses.retrieve(unstored.id).catch((e) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect(missing.error).toEqual({ message: `Response with id '${unstored.id}' not found.`, type: 'invalid_request_error', param: null, code: 'not_found' });
    const cont = await client().responses.create({ model: 'sandbox', input: 'more', previous_response_id: unstored.id }).catch((e) => e);
    expect(cont).toBeInstanceOf(OpenAI.BadRequestError);
    expect(cont.error).toEqual({ message: `Previous response with id '${unstored.id}' not found.`, type: 'invalid_request_error', param: 'previous_response_id', code: 'previous_response_not_found' });

    const mine = await client().responses.create({ model: 'sandbox', input: 'Hello there' });
    // Another organization sees nothing: not by retrieve, delete or previous_response_id.
    expect(await client(otherKey).responses.retrieve(mine.id).catch((e) => e)).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await client(otherKey).responses.delete(mine.id).catch((e) => e)).toBeInstanceOf(OpenAI.NotFoundError);
    expect((await client(otherKey).responses.create({ model: 'sandbox', input: 'x', previous_response_id: mine.id }).catch((e) => e)).status).toBe(400);
    expect((await client().responses.retrieve(mine.id)).id).toBe(mine.id);

    const raw = await request(`${t.url}/openai/v1/responses/${mine.id}`, { method: 'DELETE', token: key });
    expect(raw.status).toBe(200);
    expect(raw.body).toEqual({ id: mine.id, object: 'response', deleted: true });
    expect(await client().responses.retrieve(mine.id).catch((e) => e)).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await client().responses.delete(mine.id).catch((e) => e)).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('runs a function-calling loop: function_call item with schema-valid arguments, then function_call_output answered with text (JSON and streamed, by items and by previous_response_id)', async () => {
    const ask = 'What is the weather in Paris this week?';
    const first = await client().responses.create({ model: 'sandbox', input: ask, tools });
    expect(first.status).toBe('completed');
    expect(first.tools).toEqual(tools.map((x) => ({ ...x, description: x.description ?? null })));
    const calls = first.output.filter((o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === 'function_call');
    expect(calls).toHaveLength(1);
    const call = calls[0]!;
    expect(call).toMatchObject({ type: 'function_call', id: expect.stringMatching(/^fc_/), call_id: expect.stringMatching(/^call_/), name: 'get_weather', status: 'completed' });
    expect(ajv.validate(WEATHER, JSON.parse(call.arguments)), JSON.stringify(ajv.errors)).toBe(true);
    expect(first.output_text).toBe('');

    // The whole transcript sent back as items (as stateless clients do).
    const second = await client().responses.create({
      model: 'sandbox', tools, store: false,
      input: [{ role: 'user', content: ask }, ...first.output as OpenAI.Responses.ResponseInputItem[], { type: 'function_call_output', call_id: call.call_id, output: '{"forecast":"sunny","high":24}' }],
    });
    expect(second.output.map((o) => o.type)).toEqual(['message']);
    expect(second.output_text).toContain('The get_weather tool returned: {"forecast":"sunny","high":24}');

    // The same by previous_response_id: only the output goes up.
    const chained = await client().responses.create({ model: 'sandbox', tools, previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"forecast":"sunny","high":24}' }] });
    expect(chained.output_text).toBe(second.output_text);

    // Streamed: output_item.added (function_call), argument deltas, arguments.done, output_item.done, completed.
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const e of await client().responses.create({ model: 'sandbox', input: ask, tools, stream: true })) events.push(e);
    const types = events.map((e) => e.type);
    expect(types.slice(0, 3)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added']);
    expect(types.slice(-3)).toEqual(['response.function_call_arguments.done', 'response.output_item.done', 'response.completed']);
    expect(types.slice(3, -3).every((x) => x === 'response.function_call_arguments.delta')).toBe(true);
    const added = (events[2] as OpenAI.Responses.ResponseOutputItemAddedEvent).item as OpenAI.Responses.ResponseFunctionToolCall;
    expect(added).toMatchObject({ type: 'function_call', status: 'in_progress', arguments: '', name: 'get_weather' });
    const args = events.filter((e): e is OpenAI.Responses.ResponseFunctionCallArgumentsDeltaEvent => e.type === 'response.function_call_arguments.delta').map((e) => e.delta).join('');
    expect(events.at(-3)).toMatchObject({ item_id: added.id, output_index: 0, name: 'get_weather', arguments: args });
    expect(args).toBe(call.arguments);
    const final = (events.at(-1) as OpenAI.Responses.ResponseCompletedEvent).response;
    expect(final.output).toEqual([{ ...added, status: 'completed', arguments: args }]);

    // client.responses.stream() with the function_call_output by previous_response_id.
    const stream = client().responses.stream({ model: 'sandbox', tools, previous_response_id: final.id, input: [{ type: 'function_call_output', call_id: added.call_id, output: 'rain' }] });
    expect((await stream.finalResponse()).output_text).toContain('The get_weather tool returned: rain');

    // tool_choice names a tool; an output answering no call is a 400 naming it.
    const named = await client().responses.create({ model: 'sandbox', input: ask, tools, tool_choice: { type: 'function', name: 'search_docs' } });
    expect((named.output[0] as OpenAI.Responses.ResponseFunctionToolCall).name).toBe('search_docs');
    expect(named.tool_choice).toEqual({ type: 'function', name: 'search_docs' });
    const orphan = await client().responses.create({ model: 'sandbox', tools, input: [{ role: 'user', content: ask }, { type: 'function_call_output', call_id: 'call_nope', output: 'x' }] }).catch((e) => e);
    expect(orphan).toBeInstanceOf(OpenAI.BadRequestError);
    expect(orphan.error.param).toBe('input[1].call_id');
  });

  it('structured output: text.format json_schema answers a document valid against the schema (JSON and streamed); json_object an object', async () => {
    const format = { type: 'json_schema' as const, name: 'plan', schema: PLAN, strict: true };
    const r = await client().responses.create({ model: 'sandbox', input: 'Plan a release', text: { format } });
    expect(r.text).toEqual({ format: { type: 'json_schema', name: 'plan', schema: PLAN, strict: true } });
    const doc = JSON.parse(r.output_text);
    expect(ajv.validate(PLAN, doc), JSON.stringify(ajv.errors)).toBe(true);
    const streamed = await client().responses.stream({ model: 'sandbox', input: 'Plan a release', text: { format } }).finalResponse();
    expect(ajv.validate(PLAN, JSON.parse(streamed.output_text))).toBe(true);
    // The SDK's parse helper reads it too.
    const parsed = await client().responses.parse({ model: 'sandbox', input: 'Plan a release', text: { format } });
    expect(ajv.validate(PLAN, parsed.output_parsed)).toBe(true);
    const obj = await client().responses.create({ model: 'sandbox', input: 'Give me JSON', text: { format: { type: 'json_object' } } });
    expect(typeof JSON.parse(obj.output_text)).toBe('object');
  });

  it('max_output_tokens cuts the answer: status incomplete with incomplete_details, streamed as response.incomplete', async () => {
    const r = await client().responses.create({ model: 'sandbox', input: 'Write a REST API for todos in Python', max_output_tokens: 3 });
    expect(r.status).toBe('incomplete');
    expect(r.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(r.output[0]).toMatchObject({ type: 'message', status: 'incomplete' });
    expect(r.usage!.output_tokens).toBe(3);
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const e of await client().responses.create({ model: 'sandbox', input: 'Write a REST API for todos in Python', max_output_tokens: 3, stream: true })) events.push(e);
    expect(events.at(-1)).toMatchObject({ type: 'response.incomplete', response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } } });
  });

  it('a Responses request goes to an OpenAI-compatible upstream as chat completions: tools, tool_choice, tool turns and response_format translated; its tool calls come back as items', async () => {
    const client = ((k) => () => new OpenAI({ apiKey: k, baseURL: `${t.url}/openai/v1`, maxRetries: 0 }))(await freshKey());
    up.reset();
    up.script({ reply: '', toolCalls: [{ id: 'call_up1', name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius","days":2}' }] });
    const r = await client().responses.create({
      model: 'gpt-test', instructions: 'Use tools.', tools, tool_choice: 'required', parallel_tool_calls: false, max_output_tokens: 50, temperature: 0.5,
      input: [{ role: 'user', content: 'Weather?' }, { type: 'function_call', call_id: 'call_0', name: 'search_docs', arguments: '{"query":"x"}' }, { type: 'function_call_output', call_id: 'call_0', output: 'nothing' }],
    });
    expect(up.requests).toHaveLength(1);
    expect(up.requests[0]!.path).toBe('/v1/chat/completions');
    expect(up.requests[0]!.body).toMatchObject({
      model: 'gpt-test', max_tokens: 50, temperature: 0.5, tool_choice: 'required', parallel_tool_calls: false,
      tools: [
        { type: 'function', function: { name: 'get_weather', description: 'The forecast for a city', parameters: WEATHER, strict: true } },
        { type: 'function', function: { name: 'search_docs', parameters: tools[1]!.parameters, strict: false } },
      ],
      messages: [
        { role: 'system', content: 'Use tools.' },
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'search_docs', arguments: '{"query":"x"}' } }] },
        { role: 'tool', tool_call_id: 'call_0', content: 'nothing' },
      ],
    });
    expect(r.output).toEqual([{ type: 'function_call', id: expect.stringMatching(/^fc_/), call_id: 'call_up1', name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius","days":2}', status: 'completed' }]);

    // Streamed from upstream deltas; and text.format as response_format.
    up.reset();
    up.script({ reply: '', toolCalls: [{ id: 'call_up2', name: 'get_weather', arguments: '{"city":"Rome","unit":"celsius","days":1}' }] });
    const final = await client().responses.stream({ model: 'gpt-test', input: 'Weather?', tools }).finalResponse();
    expect(up.requests[0]!.body.stream).toBe(true);
    expect(final.output).toMatchObject([{ type: 'function_call', call_id: 'call_up2', name: 'get_weather', arguments: '{"city":"Rome","unit":"celsius","days":1}' }]);
    up.reset();
    up.script({ reply: '{"title":"abc","steps":["a","b"],"done":true}' });
    const structured = await client().responses.create({ model: 'gpt-test', input: 'Plan', text: { format: { type: 'json_schema', name: 'plan', schema: PLAN, strict: true } } });
    expect(up.requests[0]!.body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'plan', schema: PLAN, strict: true } });
    expect(JSON.parse(structured.output_text)).toEqual({ title: 'abc', steps: ['a', 'b'], done: true });
  });

  it('an Anthropic upstream gets the Responses request translated: instructions as system, tools with input_schema, function calls and outputs as tool_use and tool_result blocks', async () => {
    const k = await freshKey();
    anthropicUp.reset();
    anthropicUp.script({ reply: 'Checking.', toolCalls: [{ name: 'get_weather', arguments: '{"city":"Oslo","unit":"celsius","days":3}' }] });
    const r = await client(k).responses.create({
      model: 'claude-test', instructions: 'Use tools.', tools, max_output_tokens: 100,
      input: [{ role: 'user', content: 'Weather?' }, { type: 'function_call', call_id: 'toolu_0', name: 'search_docs', arguments: '{"query":"x"}' }, { type: 'function_call_output', call_id: 'toolu_0', output: 'nothing' }],
    });
    const sent = anthropicUp.requests[0]!.body;
    expect(sent).toMatchObject({
      model: 'claude-test', system: 'Use tools.', max_tokens: 100,
      tools: [{ name: 'get_weather', description: 'The forecast for a city', input_schema: WEATHER }, { name: 'search_docs', input_schema: tools[1]!.parameters }],
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_0', name: 'search_docs', input: { query: 'x' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_0', content: 'nothing' }] },
      ],
    });
    expect(r.output).toMatchObject([
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
      { type: 'function_call', call_id: expect.stringMatching(/^toolu_/), name: 'get_weather', arguments: '{"city":"Oslo","unit":"celsius","days":3}' },
    ]);
    // Streamed: the message item closes before the function call opens.
    anthropicUp.reset();
    anthropicUp.script({ reply: 'Checking.', toolCalls: [{ name: 'get_weather', arguments: '{"city":"Oslo","unit":"celsius","days":3}' }] });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const e of await client(k).responses.create({ model: 'claude-test', input: 'Weather?', tools, stream: true })) events.push(e);
    const types = events.map((e) => e.type);
    expect(types.indexOf('response.output_item.done')).toBeLessThan(types.indexOf('response.function_call_arguments.delta'));
    expect((events.at(-1) as OpenAI.Responses.ResponseCompletedEvent).response.output.map((o) => o.type)).toEqual(['message', 'function_call']);
  });

  it('takes the Codex CLI\'s request as it sends it: store false, its whole transcript with reasoning items, reasoning/include/prompt_cache_key ignored, streamed', async () => {
    const shell = { type: 'function', name: 'shell', description: 'Runs a shell command and returns its output.', strict: false, parameters: { type: 'object', properties: { command: { type: 'array', items: { type: 'string' } }, workdir: { type: 'string' }, timeout_ms: { type: 'number' } }, required: ['command'], additionalProperties: false } };
    const codex = (input: unknown[]) => ({
      model: 'sandbox', instructions: 'You are Codex, a coding agent.', input, tools: [shell], tool_choice: 'auto', parallel_tool_calls: false,
      reasoning: { effort: 'medium', summary: 'auto' }, store: false, stream: true, include: ['reasoning.encrypted_content'], prompt_cache_key: 'a1b2c3', text: { verbosity: 'medium' },
    });
    const first = [
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: '<permissions instructions>sandboxed</permissions instructions>' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: '<environment_context><cwd>/work</cwd></environment_context>' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'List the files here' }] },
    ];
    const raw = async (body: unknown) => {
      const res = await fetch(`${t.url}/openai/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(res.status, await res.clone().text()).toBe(200);
      return (await res.text()).split('\n\n').filter(Boolean).map((f) => JSON.parse(f.split('\n')[1]!.replace(/^data: /, '')));
    };
    const turn1 = (await raw(codex(first))).at(-1);
    expect(turn1.type).toBe('response.completed');
    const call = turn1.response.output.find((o: any) => o.type === 'function_call');
    expect(call).toMatchObject({ name: 'shell' });
    expect(Array.isArray(JSON.parse(call.arguments).command)).toBe(true);
    const turn2 = (await raw(codex([
      ...first,
      { type: 'reasoning', id: 'rs_1', summary: [], content: null, encrypted_content: 'gAAAA…' },
      call,
      { type: 'function_call_output', call_id: call.call_id, output: 'README.md\nsrc' },
    ]))).at(-1);
    expect(turn2.response.output.map((o: any) => o.type)).toEqual(['message']);
    expect(turn2.response.output[0].content[0].text).toContain('The shell tool returned: README.md');
    expect(await client().responses.retrieve(turn2.response.id).catch((e) => e)).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('a failure after output started ends the stream with response.failed (not stored); one before is a plain HTTP error; a reader that leaves aborts the upstream call', async () => {
    const k = await freshKey();
    up.reset();
    up.script({ reply: 'one two three four five', errorAfterChunks: 2 });
    const res = await fetch(`${t.url}/openai/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-test', input: 'x', stream: true }) });
    expect(res.status).toBe(200);
    const events = (await res.text()).split('\n\n').filter(Boolean).map((f) => JSON.parse(f.split('\n')[1]!.replace(/^data: /, '')));
    expect(events.map((e) => e.type)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'response.output_text.delta', 'response.failed']);
    const failed = events.at(-1).response;
    expect(failed).toMatchObject({ status: 'failed', error: { code: expect.any(String), message: expect.any(String) }, usage: null });
    expect(failed.output).toHaveLength(1);
    expect(await client(k).responses.retrieve(failed.id).catch((e) => e)).toBeInstanceOf(OpenAI.NotFoundError);

    // Before any output: a 502 the SDK reads as an error, even when streaming.
    up.reset();
    up.script({ failNext: { count: 1, status: 500 } });
    const early = await client(k).responses.create({ model: 'gpt-test', input: 'x', stream: true }).catch((e) => e);
    expect(early).toBeInstanceOf(OpenAI.APIError);
    expect(early.status).toBeGreaterThanOrEqual(500);

    // The reader leaves mid-stream: the upstream request is aborted.
    up.reset();
    up.script({ reply: 'one two three', hangAfterChunks: 1 });
    const ctl = new AbortController();
    const stream = await client(k).responses.create({ model: 'gpt-test', input: 'x', stream: true }, { signal: ctl.signal });
    for await (const e of stream) if (e.type === 'response.output_text.delta') { ctl.abort(); break; }
    await up.waitForAborts(1);
  });

  it('fallbacks apply: an upstream failing before the first token is served by the fallback, named in the response\'s model, JSON and streamed', async () => {
    const k = await freshKey();
    for (const stream of [false, true]) {
      up.reset();
      anthropicUp.reset();
      up.script({ failNext: { count: 1, status: 503 } });
      anthropicUp.script({ reply: 'From the fallback.' });
      const r = stream
        ? await client(k).responses.stream({ model: 'gpt-flaky', input: 'x', tools }).finalResponse()
        : await client(k).responses.create({ model: 'gpt-flaky', input: 'x', tools });
      expect(r.model, `stream ${stream}`).toBe('claude-test');
      expect(r.output_text).toBe('From the fallback.');
      expect(up.requests).toHaveLength(1);
      expect(anthropicUp.requests[0]!.body.tools[0].name).toBe('get_weather');
      expect((await client(k).responses.retrieve(r.id)).model).toBe('claude-test');
    }
  });

  it('limits and budgets apply: a call that can never fit the key\'s tokens-per-minute is a 400 request_too_large; over the window a 429 in OpenAI\'s shape, streaming or not', async () => {
    const { token } = await registerUser(t.url, { ip: nextIp() });
    const limited = (await request(`${t.url}/api/v1/api-keys`, { token, body: { name: 'small', tokens_per_minute: 3000 } })).body.key as string;
    const never = await client(limited).responses.create({ model: 'gpt-test', input: 'x', max_output_tokens: 5000 }).catch((x) => x);
    expect(never).toBeInstanceOf(OpenAI.BadRequestError);
    expect(never.error.code).toBe('request_too_large');
    let refused: any;
    for (let i = 0; i < 50 && !refused; i++) {
      refused = await client(limited).responses.create({ model: 'sandbox', input: 'Hello' }).then(() => undefined, (x) => x);
    }
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect(refused.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' });
    const streamed = await client(limited).responses.create({ model: 'sandbox', input: 'Hello', stream: true }).catch((x) => x);
    expect(streamed).toBeInstanceOf(OpenAI.RateLimitError);
  });

  it('stored responses are kept per environment and expire: past expires_at they are not answered, and the cleanup deletes them', async () => {
    const sandboxKey = (await request(`${t.url}/api/v1/api-keys`, { token: session, body: { name: 'sbx', environment: 'sandbox' } })).body.key as string;
    const live = await client().responses.create({ model: 'sandbox', input: 'Hello' });
    expect(await client(sandboxKey).responses.retrieve(live.id).catch((e) => e)).toBeInstanceOf(OpenAI.NotFoundError);
    const sbx = await client(sandboxKey).responses.create({ model: 'sandbox', input: 'Hello' });
    expect((await client(sandboxKey).responses.retrieve(sbx.id)).id).toBe(sbx.id);

    const store = t.server.ctx.store;
    const row = await store.handle.db.selectFrom('responses').selectAll().where('id', '=', live.id).executeTakeFirstOrThrow();
    expect(Date.parse(row.expires_at) - Date.parse(row.created_at)).toBe(30 * 24 * 3600 * 1000);
    expect(row).toMatchObject({ user_id: expect.stringMatching(/^usr_/), org_id: expect.stringMatching(/^org_/), environment: 'production' });
    await store.handle.db.updateTable('responses').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', live.id).execute();
    expect(await client().responses.retrieve(live.id).catch((e) => e)).toBeInstanceOf(OpenAI.NotFoundError);
    expect((await client().responses.create({ model: 'sandbox', input: 'x', previous_response_id: live.id }).catch((e) => e)).error.code).toBe('previous_response_not_found');
    expect(await store.responses.deleteExpired(new Date().toISOString())).toBe(1);
    expect(await store.handle.db.selectFrom('responses').select('id').where('id', '=', live.id).executeTakeFirst()).toBeUndefined();
    expect((await client(sandboxKey).responses.retrieve(sbx.id)).id).toBe(sbx.id);
  });

  it('a known path with another method is a 405 with Allow', async () => {
    for (const [method, path, allow] of [['GET', '/openai/v1/responses', 'POST'], ['PUT', '/openai/v1/responses/resp_x', 'GET, DELETE']] as const) {
      const res = await request(`${t.url}${path}`, { method, token: key });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe(allow);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'method_not_allowed' });
    }
  });

  it.skipIf(!llamaInstalled)('a model that cannot honour tools, function call items or text.format is a 400 naming the field in the Responses API\'s terms', async () => {
    const c = client();
    await expect(c.responses.create({ model: 'local', input: 'x', tools })).rejects.toMatchObject({ status: 400, param: 'tools' });
    await expect(c.responses.create({ model: 'local', input: 'x', text: { format: { type: 'json_object' } } })).rejects.toMatchObject({ status: 400, param: 'text.format' });
    await expect(c.responses.create({ model: 'local', input: [{ role: 'user', content: 'x' }, { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }, { type: 'function_call_output', call_id: 'c1', output: 'r' }] }))
      .rejects.toMatchObject({ status: 400, param: 'input' });
    await expect(c.responses.create({ model: 'local', input: 'x', tools, stream: true })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  });

  it('hostile request bodies are 2xx or 4xx in OpenAI\'s shape, never a 5xx (property test)', async () => {
    const k = await freshKey();
    const value = fc.oneof(hostileString, hostileJson, fc.constant(null));
    const part = fc.record({ type: fc.oneof(fc.constantFrom('input_text', 'output_text', 'input_image', 'refusal'), hostileString), text: fc.option(value, { nil: undefined }) }, { requiredKeys: [] });
    const item = fc.oneof(
      fc.record({ role: fc.oneof(fc.constantFrom('user', 'assistant', 'system', 'developer', 'tool'), hostileString), content: fc.oneof(value, fc.array(part, { maxLength: 3 })), type: fc.option(fc.constantFrom('message', 'function_call', 'reasoning', 'item_reference'), { nil: undefined }) }, { requiredKeys: [] }),
      fc.record({ type: fc.constantFrom('function_call', 'function_call_output'), call_id: fc.oneof(fc.constantFrom('c1', 'call_x'), hostileString), name: fc.oneof(fc.constant('get_weather'), hostileString), arguments: fc.oneof(fc.constant('{"city":"x"}'), hostileString), output: fc.oneof(value, fc.array(part, { maxLength: 2 })) }, { requiredKeys: ['type'] }),
    );
    const body = fc.record({
      model: fc.oneof(fc.constantFrom('sandbox', 'gpt-test', 'claude-test'), hostileString),
      input: fc.oneof(hostileString, fc.array(item, { maxLength: 4 }), value),
      instructions: value, tools: fc.oneof(value, fc.constant(tools), fc.array(fc.record({ type: fc.oneof(fc.constant('function'), hostileString), name: hostileString, parameters: value, strict: value }, { requiredKeys: [] }), { maxLength: 2 })),
      tool_choice: fc.oneof(fc.constantFrom('auto', 'none', 'required'), fc.record({ type: fc.oneof(fc.constant('function'), hostileString), name: hostileString }, { requiredKeys: [] }), value),
      max_output_tokens: fc.oneof(fc.integer({ min: -5, max: 200 }), value), temperature: value,
      text: fc.oneof(value, fc.record({ format: fc.record({ type: fc.oneof(fc.constantFrom('text', 'json_object', 'json_schema'), hostileString), name: hostileString, schema: fc.oneof(fc.constant(PLAN), value) }, { requiredKeys: [] }) })),
      stream: fc.oneof(fc.boolean(), value), previous_response_id: fc.oneof(hostileString, value), store: fc.oneof(fc.boolean(), value), metadata: value,
    }, { requiredKeys: [] });
    up.reset();
    anthropicUp.reset();
    await fc.assert(fc.asyncProperty(body, async (b) => {
      const res = await fetch(`${t.url}/openai/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' }, body: JSON.stringify(b) });
      const text = await res.text();
      expect(res.status, text).toBeLessThan(500);
      if (res.status >= 400) expect(JSON.parse(text).error, text).toMatchObject({ message: expect.any(String), type: expect.any(String) });
    }), { numRuns: 150 });
  });

  it('an upstream 400 keeps its code; errors are OpenAI\'s shape naming the parameter', async () => {
    const bad = async (body: Record<string, unknown>) => {
      const res = await request(`${t.url}/openai/v1/responses`, { token: key, body: { model: 'sandbox', ...body } });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.type).toBe('invalid_request_error');
      return res.body.error.param;
    };
    expect(await bad({ input: 'x', tools: [{ type: 'web_search_preview' }] })).toBe('tools');
    expect(await bad({ input: 'x', tools: [{ type: 'function', name: 'a b' }] })).toBe('tools[0].name');
    expect(await bad({ input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'http://x' }] }] })).toBe('input[0].content[0]');
    expect(await bad({ input: [{ type: 'item_reference', id: 'x' }] })).toBe('input[0].type');
    expect(await bad({ input: [{ role: 'tool', content: 'x' }] })).toBe('input[0].role');
    expect(await bad({ input: [{ type: 'function_call_output', output: 'x' }] })).toBe('input[0].call_id');
    expect(await bad({})).toBe('input');
    expect(await bad({ input: 'x', text: { format: { type: 'json_schema', schema: PLAN } } })).toBe('text.format.name');
    expect(await bad({ input: 'x', tool_choice: 'required' })).toBe('tool_choice');
    expect(await bad({ input: 'x', tools, tool_choice: { type: 'function', name: 'nope' } })).toBe('tool_choice.name');
    expect(await bad({ input: 'x', max_output_tokens: 0 })).toBe('max_output_tokens');
    expect(await bad({ input: 'x', background: true })).toBe('background');

    const unknownModel = await client().responses.create({ model: 'no-such-model', input: 'x' }).catch((e) => e);
    expect(unknownModel).toBeInstanceOf(OpenAI.NotFoundError);
    expect(unknownModel.error.param).toBe('model');

    const upKey = await freshKey();
    up.reset();
    up.script({ failNext: { count: 1, status: 400, message: 'This model\'s maximum context length is 8192 tokens.' } });
    const upstream = await client(upKey).responses.create({ model: 'gpt-test', input: 'x' }).catch((e) => e);
    expect(upstream).toBeInstanceOf(OpenAI.BadRequestError);
    expect(upstream.error.type).toBe('invalid_request_error');
    expect(up.requests).toHaveLength(1);
  });
}

describe('Responses API (SQLite)', () => responsesSuite('sqlite'));
describe.skipIf(!TEST_DATABASE_URL)('Responses API (PostgreSQL)', () => responsesSuite('postgres'));

describe.skipIf(!TEST_DATABASE_URL)('stored responses: the cleanup job (PostgreSQL, two server lives on one schema)', () => {
  it('a server starting up deletes the responses that expired while it was down', async () => {
    const pgSchema = uniqueName('resp');
    try {
      const first = await startTestServer({ dialect: 'postgres', pgSchema });
      const { token } = await registerUser(first.url, { ip: nextIp() });
      const k = (await request(`${first.url}/api/v1/api-keys`, { token, body: { name: 'k' } })).body.key as string;
      const c = new OpenAI({ apiKey: k, baseURL: `${first.url}/openai/v1`, maxRetries: 0 });
      const gone = await c.responses.create({ model: 'sandbox', input: 'Hello' });
      const kept = await c.responses.create({ model: 'sandbox', input: 'Hello' });
      await first.server.ctx.store.handle.db.updateTable('responses').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', gone.id).execute();
      await first.close();

      const second = await startTestServer({ dialect: 'postgres', pgSchema });
      try {
        const ids = async () => (await second.server.ctx.store.handle.db.selectFrom('responses').select('id').execute()).map((r) => r.id);
        const deadline = Date.now() + 5000;
        while ((await ids()).includes(gone.id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        expect(await ids()).toEqual([kept.id]);
      } finally {
        await second.close();
      }
    } finally {
      await dropPgSchema(pgSchema);
    }
  });
});
