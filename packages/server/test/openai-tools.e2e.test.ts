/**
 * Tool calling and structured output on /openai/v1/chat/completions (CONTRACT §12.3, issue 24 item 1),
 * driven by the official `openai` client and the AI SDK: a whole agent loop against the sandbox model (its tool runner
 * included), JSON and streamed; passthrough to an OpenAI-compatible upstream (the OpenAI fake) and
 * translation for an Anthropic upstream (the Anthropic fake: tools with input_schema, tool_use and
 * tool_result blocks); json_schema answers checked with ajv; `stop` with up to 64 strings; and a 400 naming
 * the field for what a model cannot honour (the embedded llama.cpp model, when node-llama-cpp is installed).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv from 'ajv';
import OpenAI from 'openai';
import { generateText, jsonSchema, Output, stepCountIs, streamText, tool as aiTool } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIFake } from './fakes/openai-fake.js';
import { startAnthropicFake } from './fakes/anthropic-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { loadNodeLlamaCpp } from '../src/providers/llama/llama-provider.js';
import { writeTinyGguf } from '../src/providers/llama/tiny-gguf.js';

const llamaInstalled = Boolean(await loadNodeLlamaCpp());

let openaiUp: FakeVendor;
let anthropicUp: FakeVendor;
let t: TestServer;
let session: string;
let key: string;

const ajv = new Ajv.default({ strict: false, allErrors: true });
const client = () => new OpenAI({ apiKey: key, baseURL: `${t.url}/openai/v1`, maxRetries: 0 });

const WEATHER = {
  type: 'object',
  properties: { city: { type: 'string', minLength: 2 }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] }, days: { type: 'integer', minimum: 1, maximum: 7 } },
  required: ['city', 'unit', 'days'],
  additionalProperties: false,
};
const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_weather', description: 'The forecast for a city', parameters: WEATHER, strict: true } },
  { type: 'function', function: { name: 'search_docs', parameters: { type: 'object', properties: { query: { type: 'string' }, tags: { type: 'array', minItems: 2, items: { type: 'string' } } }, required: ['query', 'tags'] } } },
];
const ask: OpenAI.Chat.Completions.ChatCompletionMessageParam = { role: 'user', content: 'What is the weather in Paris this week?' };

/** Tool calls without what the SDK's stream helper adds (`parsed_arguments` for strict tools). */
const plain = (calls: OpenAI.Chat.Completions.ChatCompletionMessageToolCall[] | undefined) =>
  calls?.map((c: any) => ({ id: c.id, type: c.type, function: { name: c.function.name, arguments: c.function.arguments } }));

/** The raw SSE of a chat completion, as parsed chunks (without [DONE], which must end the stream). */
async function rawStream(body: Record<string, unknown>): Promise<any[]> {
  const res = await fetch(`${t.url}/openai/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ ...body, stream: true }) });
  expect(res.status, await res.clone().text()).toBe(200);
  const lines = (await res.text()).split('\n\n').filter(Boolean).map((l) => l.replace(/^data: /, ''));
  expect(lines.at(-1)).toBe('[DONE]');
  return lines.slice(0, -1).map((l) => JSON.parse(l));
}

beforeAll(async () => {
  openaiUp = await startOpenAIFake();
  anthropicUp = await startAnthropicFake();
  const env: Record<string, string> = {
    OPENAI_BASE_URL: `${openaiUp.url}/v1`, OPENAI_API_KEY: 'sk-up', CODELOOM_OPENAI_MODELS: 'gpt-test',
    ANTHROPIC_BASE_URL: anthropicUp.url, ANTHROPIC_API_KEY: 'sk-ant-up', CODELOOM_ANTHROPIC_MODELS: 'claude-test',
    CODELOOM_DEFAULT_MODEL: 'sandbox', CODELOOM_UPSTREAM_RETRIES: '0',
  };
  if (llamaInstalled) {
    const file = join(mkdtempSync(join(tmpdir(), 'codeloom-gguf-')), 'tiny.gguf');
    await writeTinyGguf(file, { seed: 7 });
    env.CODELOOM_LLAMA_MODEL = file;
  }
  t = await startTestServer({ env });
  ({ token: session } = await registerUser(t.url, { ip: nextIp() }));
  const res = await request(`${t.url}/api/v1/api-keys`, { token: session, body: { name: 'agent' } });
  expect(res.status, res.text).toBe(201);
  key = res.body.key;
}, 60_000);
afterAll(async () => { await t?.close(); await openaiUp?.close(); await anthropicUp?.close(); });

describe('the sandbox model in an agent loop', () => {
  it('calls the first tool with schema-valid arguments, then answers the tool result with text that quotes it (JSON answers)', async () => {
    const first = await client().chat.completions.create({ model: 'sandbox', messages: [ask], tools });
    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toHaveLength(1);
    const call = choice.message.tool_calls![0]! as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
    expect(call).toMatchObject({ id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'get_weather' } });
    const args = JSON.parse(call.function.arguments);
    expect(ajv.validate(WEATHER, args), JSON.stringify(ajv.errors)).toBe(true);
    // Tool calls are output: counted in usage like text.
    expect(first.usage!.completion_tokens).toBeGreaterThan(1);

    const second = await client().chat.completions.create({
      model: 'sandbox', tools,
      messages: [ask, choice.message, { role: 'tool', tool_call_id: call.id, content: '{"forecast":"sunny","high":24}' }],
    });
    expect(second.choices[0]!.finish_reason).toBe('stop');
    expect(second.choices[0]!.message.tool_calls).toBeUndefined();
    expect(second.choices[0]!.message.content).toContain('The get_weather tool returned: {"forecast":"sunny","high":24}');

    // Recorded in history, the tool call as the output.
    const history = await request(`${t.url}/api/v1/generations/${first.id}`, { token: session });
    expect(history.status).toBe(200);
    expect(JSON.parse(history.body.output)).toEqual([{ id: call.id, name: 'get_weather', arguments: call.function.arguments }]);
  });

  it('the SDK\'s tool runner runs the whole loop (tools → call → result → text), streaming and not', async () => {
    for (const stream of [false, true]) {
      const seen: unknown[] = [];
      const runner = client().chat.completions.runTools({
        model: 'sandbox', stream,
        messages: [ask],
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: WEATHER, parse: JSON.parse, function: (a: unknown) => { seen.push(a); return { forecast: 'rain', city: (a as { city: string }).city }; } } }],
      } as any);
      const content = await runner.finalContent();
      expect(seen, `stream ${stream}`).toHaveLength(1);
      expect(ajv.validate(WEATHER, seen[0])).toBe(true);
      expect(content).toContain('The get_weather tool returned: {"forecast":"rain","city":"city"}');
    }
  });

  it('streams tool calls exactly as OpenAI does: role chunk, the call\'s head, argument fragments with only the index, finish_reason tool_calls, usage', async () => {
    const chunks = await rawStream({ model: 'sandbox', messages: [ask], tools, stream_options: { include_usage: true } });
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
    const calls = chunks.filter((c) => c.choices[0]?.delta?.tool_calls);
    expect(calls[0].choices[0].delta.tool_calls).toEqual([{ index: 0, id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'get_weather', arguments: '' } }]);
    expect(calls.length).toBeGreaterThan(3);
    for (const c of calls.slice(1)) {
      expect(Object.keys(c.choices[0].delta.tool_calls[0]).sort()).toEqual(['function', 'index']);
      expect(Object.keys(c.choices[0].delta.tool_calls[0].function)).toEqual(['arguments']);
    }
    const args = calls.slice(1).map((c) => c.choices[0].delta.tool_calls[0].function.arguments).join('');
    expect(ajv.validate(WEATHER, JSON.parse(args))).toBe(true);
    const finish = chunks.filter((c) => c.choices[0]?.finish_reason);
    expect(finish).toHaveLength(1);
    expect(finish[0].choices[0]).toMatchObject({ delta: {}, finish_reason: 'tool_calls' });
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: calls.length } });

    // The SDK reassembles the same call as the JSON answer.
    const whole = await client().chat.completions.create({ model: 'sandbox', messages: [ask], tools });
    const final = await client().chat.completions.stream({ model: 'sandbox', messages: [ask], tools }).finalChatCompletion();
    expect(plain(final.choices[0]!.message.tool_calls)).toEqual(whole.choices[0]!.message.tool_calls);
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
  });

  it('tool_choice: a named tool is called; "none" answers in text; a name that is not offered is a 400 naming it', async () => {
    const named = await client().chat.completions.create({ model: 'sandbox', messages: [ask], tools, tool_choice: { type: 'function', function: { name: 'search_docs' } } });
    const call = named.choices[0]!.message.tool_calls![0]! as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
    expect(call.function.name).toBe('search_docs');
    expect(JSON.parse(call.function.arguments).tags).toHaveLength(2);
    const none = await client().chat.completions.create({ model: 'sandbox', messages: [ask], tools, tool_choice: 'none', max_tokens: 50 });
    expect(none.choices[0]!.message.tool_calls).toBeUndefined();
    expect(none.choices[0]!.message.content!.length).toBeGreaterThan(0);
    const unknown = client().chat.completions.create({ model: 'sandbox', messages: [ask], tools, tool_choice: { type: 'function', function: { name: 'nope' } } });
    await expect(unknown).rejects.toMatchObject({ status: 400, param: 'tool_choice.function.name' });
  });

  it('the output cap cuts a tool call like text: finish_reason length, usage at the cap', async () => {
    const cut = await client().chat.completions.create({ model: 'sandbox', messages: [ask], tools, max_tokens: 4 });
    expect(cut.choices[0]!.finish_reason).toBe('length');
    expect(cut.usage!.completion_tokens).toBe(4);
  });
});

describe('structured output', () => {
  const SCHEMA = {
    type: 'object',
    properties: {
      title: { type: 'string', minLength: 3 }, steps: { type: 'array', minItems: 2, items: { type: 'object', properties: { n: { type: 'integer', minimum: 1 }, done: { type: 'boolean' } }, required: ['n', 'done'] } },
      level: { enum: ['low', 'high'] }, owner: { anyOf: [{ type: 'null' }, { type: 'string', format: 'email' }] },
    },
    required: ['title', 'steps', 'level', 'owner'],
    additionalProperties: false,
  };

  it('json_schema: the sandbox answers a document valid against the schema, JSON and streamed; json_object: a JSON object', async () => {
    const response_format = { type: 'json_schema' as const, json_schema: { name: 'plan', schema: SCHEMA, strict: true } };
    const res = await client().chat.completions.create({ model: 'sandbox', messages: [{ role: 'user', content: 'Plan a release' }], response_format });
    const doc = JSON.parse(res.choices[0]!.message.content!);
    expect(ajv.validate(SCHEMA, doc), JSON.stringify(ajv.errors)).toBe(true);
    const streamed = await client().chat.completions.stream({ model: 'sandbox', messages: [{ role: 'user', content: 'Plan a release' }], response_format }).finalChatCompletion();
    expect(JSON.parse(streamed.choices[0]!.message.content!)).toEqual(doc);
    const obj = await client().chat.completions.create({ model: 'sandbox', messages: [{ role: 'user', content: 'Reply in JSON' }], response_format: { type: 'json_object' } });
    expect(typeof JSON.parse(obj.choices[0]!.message.content!)).toBe('object');
  });

  it('an OpenAI-compatible upstream gets response_format as sent; an Anthropic one a forced tool whose input is the answer', async () => {
    openaiUp.reset();
    openaiUp.script({ reply: '{"title":"x"}' });
    const response_format = { type: 'json_schema' as const, json_schema: { name: 'plan', schema: SCHEMA, strict: true } };
    await client().chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Plan' }], response_format });
    expect(openaiUp.requests[0]!.body.response_format).toEqual(response_format);

    anthropicUp.reset();
    const answer = { title: 'Release', steps: [{ n: 1, done: false }, { n: 2, done: false }], level: 'low', owner: null };
    anthropicUp.script({ reply: '', toolCalls: [{ name: 'plan', arguments: JSON.stringify(answer) }] });
    const res = await client().chat.completions.create({ model: 'claude-test', messages: [{ role: 'user', content: 'Plan' }], response_format });
    expect(anthropicUp.requests[0]!.body).toMatchObject({ tools: [{ name: 'plan', input_schema: SCHEMA }], tool_choice: { type: 'tool', name: 'plan' } });
    expect(res.choices[0]!.finish_reason).toBe('stop');
    expect(JSON.parse(res.choices[0]!.message.content!)).toEqual(answer);
    const streamed = await client().chat.completions.stream({ model: 'claude-test', messages: [{ role: 'user', content: 'Plan' }], response_format }).finalChatCompletion();
    expect(JSON.parse(streamed.choices[0]!.message.content!)).toEqual(answer);
    expect(streamed.choices[0]!.message.tool_calls ?? []).toEqual([]);
    // With tools as well there is no forced tool to use: a 400 naming response_format, never a dropped field.
    const both = client().chat.completions.create({ model: 'claude-test', messages: [{ role: 'user', content: 'Plan' }], response_format, tools });
    await expect(both).rejects.toMatchObject({ status: 400, param: 'response_format' });
  });
});

describe('an OpenAI-compatible upstream: passthrough', () => {
  it('forwards tools, tool_choice, parallel_tool_calls and the tool turns unchanged; returns its tool calls, JSON and streamed', async () => {
    openaiUp.reset();
    const scripted = [{ id: 'call_up1', name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius","days":3}' }, { id: 'call_up2', name: 'search_docs', arguments: '{"query":"umbrella","tags":["a","b"]}' }];
    openaiUp.script({ reply: '', toolCalls: scripted });
    const history: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      ask,
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_old', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lyon","unit":"celsius","days":1}' } }] },
      { role: 'tool', tool_call_id: 'call_old', content: 'cloudy' },
    ];
    const res = await client().chat.completions.create({ model: 'gpt-test', messages: history, tools, tool_choice: 'auto', parallel_tool_calls: true });
    expect(openaiUp.requests[0]!.body).toMatchObject({ tools, tool_choice: 'auto', parallel_tool_calls: true, messages: history });
    expect(res.choices[0]!.finish_reason).toBe('tool_calls');
    expect(res.choices[0]!.message.content).toBeNull();
    expect(res.choices[0]!.message.tool_calls).toEqual(scripted.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })));

    // Streamed: the upstream's delta.tool_calls (the first call's head in its role chunk) reach the SDK, which reassembles both calls.
    const streamed = await client().chat.completions.stream({ model: 'gpt-test', messages: history, tools }).finalChatCompletion();
    expect(plain(streamed.choices[0]!.message.tool_calls)).toEqual(res.choices[0]!.message.tool_calls);
    expect(streamed.choices[0]!.finish_reason).toBe('tool_calls');
    expect(openaiUp.requests[1]!.body).toMatchObject({ stream: true, tools });

    // Each call's first delta has index, id, type and name; the rest only index and argument fragments.
    const chunks = await rawStream({ model: 'gpt-test', messages: history, tools });
    const entries = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    expect(entries.filter((e: any) => e.id).map((e: any) => [e.index, e.id, e.function.name, e.function.arguments])).toEqual([[0, 'call_up1', 'get_weather', ''], [1, 'call_up2', 'search_docs', '']]);
    expect(entries.filter((e: any) => !e.id).every((e: any) => Object.keys(e).join() === 'index,function')).toBe(true);
  });
});

describe('an Anthropic upstream: translation', () => {
  it('sends tools as input_schema, tool_choice as any/tool, tool turns as tool_use and tool_result blocks; the client sees OpenAI tool calls', async () => {
    anthropicUp.reset();
    anthropicUp.script({ reply: '', toolCalls: [{ name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius","days":2}' }] });
    const history: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'You forecast.' },
      ask,
      { role: 'assistant', content: 'Let me look.', tool_calls: [{ id: 'toolu_old1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lyon","unit":"celsius","days":1}' } }, { id: 'toolu_old2', type: 'function', function: { name: 'search_docs', arguments: '{"query":"x","tags":["a","b"]}' } }] },
      { role: 'tool', tool_call_id: 'toolu_old1', content: 'cloudy' },
      { role: 'tool', tool_call_id: 'toolu_old2', content: 'nothing found' },
    ];
    const res = await client().chat.completions.create({ model: 'claude-test', messages: history, tools, tool_choice: 'required', parallel_tool_calls: false });
    const sent = anthropicUp.requests[0]!.body;
    expect(sent.system).toBe('You forecast.');
    expect(sent.tools).toEqual([
      { name: 'get_weather', description: 'The forecast for a city', input_schema: WEATHER },
      { name: 'search_docs', input_schema: tools[1]!.type === 'function' ? (tools[1] as any).function.parameters : undefined },
    ]);
    expect(sent.tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true });
    expect(sent.messages).toEqual([
      { role: 'user', content: ask.content },
      { role: 'assistant', content: [
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_use', id: 'toolu_old1', name: 'get_weather', input: { city: 'Lyon', unit: 'celsius', days: 1 } },
        { type: 'tool_use', id: 'toolu_old2', name: 'search_docs', input: { query: 'x', tags: ['a', 'b'] } },
      ] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_old1', content: 'cloudy' }, { type: 'tool_result', tool_use_id: 'toolu_old2', content: 'nothing found' }] },
    ]);
    expect(res.choices[0]!.finish_reason).toBe('tool_calls');
    const call = res.choices[0]!.message.tool_calls![0]! as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
    expect(call).toMatchObject({ id: expect.stringMatching(/^toolu_/), type: 'function', function: { name: 'get_weather' } });
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris', unit: 'celsius', days: 2 });

    // Streamed: content_block_start (tool_use) and input_json_delta become delta.tool_calls.
    const streamed = await client().chat.completions.stream({ model: 'claude-test', messages: history, tools, tool_choice: { type: 'function', function: { name: 'get_weather' } } }).finalChatCompletion();
    expect(anthropicUp.requests[1]!.body.tool_choice).toEqual({ type: 'tool', name: 'get_weather' });
    expect(streamed.choices[0]!.finish_reason).toBe('tool_calls');
    expect(plain(streamed.choices[0]!.message.tool_calls)).toEqual(res.choices[0]!.message.tool_calls!.map((c) => ({ ...c, id: expect.stringMatching(/^toolu_/) })));
    const none = await client().chat.completions.create({ model: 'claude-test', messages: [ask], tools, tool_choice: 'none' });
    expect(anthropicUp.requests[2]!.body.tool_choice).toEqual({ type: 'none' });
    expect(none.choices[0]!.finish_reason).toBe('tool_calls'); // the fake's script still calls; the field was sent, not dropped
  });
});

describe('validation', () => {
  it('stop takes up to 64 strings (Continue sends 10–12); 65 is a 400 saying so', async () => {
    const stop = ['\n\n', '```', '/src/', '#- coding: utf-8', '\nfunction', '\nclass', '\nmodule', '\nexport', '\n#', '\n//', '<|endoftext|>', '<fim_pad>'];
    const ok = await client().chat.completions.create({ model: 'sandbox', messages: [{ role: 'user', content: 'x' }], stop, max_tokens: 20 });
    expect(ok.choices[0]!.finish_reason).toMatch(/stop|length/);
    const completions = await client().completions.create({ model: 'sandbox', prompt: 'def f(', suffix: ')', stop: stop.slice(0, 10) });
    expect(completions.object).toBe('text_completion');
    const many = client().chat.completions.create({ model: 'sandbox', messages: [{ role: 'user', content: 'x' }], stop: Array.from({ length: 65 }, (_, i) => `s${i}`) });
    await expect(many).rejects.toMatchObject({ status: 400, param: 'stop' });
    await expect(many).rejects.toThrow(/stop must be a string or up to 64 strings/);
  });

  it('bad tools, tool turns and response formats are 400s naming the parameter', async () => {
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ tools: [{ type: 'function', function: { name: 'has space' } }] }, 'tools[0].function.name', /letters, digits, underscores or dashes/],
      [{ tools: [{ type: 'retrieval', function: { name: 'x' } }] }, 'tools[0].type', /must be "function"/],
      [{ tools: Array.from({ length: 129 }, (_, i) => ({ type: 'function', function: { name: `t${i}` } })) }, 'tools', /at most 128 tools/],
      [{ tools: [{ type: 'function', function: { name: 'big', parameters: { type: 'object', description: 'x'.repeat(100_001) } } }] }, 'tools[0].function.parameters', /at most 100000 bytes/],
      [{ tools: [{ type: 'function', function: { name: 'a' } }, { type: 'function', function: { name: 'a' } }] }, 'tools[1].function.name', /repeats/],
      [{ tools, tool_choice: 'sometimes' }, 'tool_choice', /"none", "auto", "required"/],
      [{ tool_choice: 'required' }, 'tool_choice', /no tools/],
      [{ response_format: { type: 'json_schema' } }, 'response_format.json_schema', /is required/],
      [{ response_format: { type: 'yaml' } }, 'response_format.type', /"text", "json_object" or "json_schema"/],
      [{ messages: [{ role: 'user', content: 'x', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }] }, 'messages[0].tool_calls', /only allowed on assistant/],
    ];
    for (const [extra, param, message] of cases) {
      const res = await request(`${t.url}/openai/v1/chat/completions`, { token: key, body: { model: 'sandbox', messages: [ask], ...extra } });
      expect(res.status, `${param}: ${res.text.slice(0, 300)}`).toBe(400);
      expect(res.body.error.param, res.text.slice(0, 300)).toBe(param);
      expect(res.body.error.message).toMatch(message);
    }
  });

  it.skipIf(!llamaInstalled)('a model that cannot honour tools, tool turns or a response format is a 400 naming the field, never a silent drop', async () => {
    const c = client();
    await expect(c.chat.completions.create({ model: 'local', messages: [ask], tools })).rejects.toMatchObject({ status: 400, param: 'tools' });
    await expect(c.chat.completions.create({ model: 'local', messages: [ask], response_format: { type: 'json_object' } })).rejects.toMatchObject({ status: 400, param: 'response_format' });
    const turns: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [ask, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'c1', content: 'r' }];
    await expect(c.chat.completions.create({ model: 'local', messages: turns })).rejects.toMatchObject({ status: 400, param: 'messages[1]' });
    await expect(c.chat.completions.create({ model: 'local', messages: [ask], tools, stream: true })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  });
});

describe('the AI SDK (ai + @ai-sdk/openai-compatible)', () => {
  const model = () => createOpenAICompatible({ name: 'codeloom', baseURL: `${t.url}/openai/v1`, apiKey: key, supportsStructuredOutputs: true, includeUsage: true }).chatModel('sandbox');
  const weather = () => aiTool({
    description: 'The forecast for a city',
    inputSchema: jsonSchema<{ city: string; unit: string; days: number }>(WEATHER as any),
    execute: async (input) => { seen.push(input); return { forecast: 'sunny', city: input.city }; },
  });
  let seen: unknown[] = [];

  it('generateText and streamText run the tool loop: tool call → execute → tool result → text', async () => {
    for (const run of ['generate', 'stream'] as const) {
      seen = [];
      const options = { model: model(), prompt: 'What is the weather in Paris this week?', tools: { get_weather: weather() }, stopWhen: stepCountIs(3), maxRetries: 0 };
      const { text, steps } = run === 'generate' ? await generateText(options) : await (async () => {
        const r = streamText(options);
        return { text: await r.text, steps: await r.steps };
      })();
      expect(seen, run).toHaveLength(1);
      expect(ajv.validate(WEATHER, seen[0])).toBe(true);
      expect(steps.map((s) => s.finishReason)).toEqual(['tool-calls', 'stop']);
      expect(text).toContain('The get_weather tool returned: {"forecast":"sunny","city":"city"}');
    }
  });

  it('structured output: Output.object with a JSON schema gets a valid object', async () => {
    const schema = { type: 'object', properties: { name: { type: 'string', minLength: 2 }, tags: { type: 'array', minItems: 1, items: { type: 'string' } }, stars: { type: 'integer', minimum: 1, maximum: 5 } }, required: ['name', 'tags', 'stars'], additionalProperties: false };
    const { output } = await generateText({ model: model(), prompt: 'Describe a library', output: Output.object({ schema: jsonSchema(schema as any) }), maxRetries: 0 });
    expect(ajv.validate(schema, output), JSON.stringify(ajv.errors)).toBe(true);
  });
});
