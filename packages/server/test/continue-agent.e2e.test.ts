/**
 * Continue's agent mode through Codeloom (issue 24): its request shape (fixtures/continue/agent-mode-turn.json:
 * agent rules, the task, its built-in tools, streamed) replayed with the `openai` SDK as Continue sends it.
 * Against the sandbox model a whole turn completes offline: a streamed call of its first tool with arguments
 * valid against that tool's schema, then — after Continue's `tool_calls` + `tool` messages — a text answer.
 * Against an OpenAI-compatible upstream the tools, the tool call and the tool result reach it unchanged.
 */
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';

const TURN = JSON.parse(readFileSync(new URL('./fixtures/continue/agent-mode-turn.json', import.meta.url), 'utf8'));

describe("Continue's agent mode", () => {
  let upstream: FakeVendor;
  let t: TestServer;
  let client: OpenAI;
  beforeAll(async () => {
    upstream = await startOpenAIFake({ script: { reply: '', toolCalls: [{ id: 'call_up1', name: 'builtin_read_file', arguments: '{"filepath":"src/math.ts"}' }] } });
    t = await startTestServer({ env: { OPENAI_BASE_URL: `${upstream.url}/v1`, OPENAI_API_KEY: 'sk-up', CODELOOM_OPENAI_MODELS: 'gpt-agent', CODELOOM_DEFAULT_MODEL: 'sandbox', CODELOOM_UPSTREAM_RETRIES: '0' } });
    const { token } = await registerUser(t.url, { ip: nextIp() });
    const key = (await request(`${t.url}/api/v1/api-keys`, { token, body: { name: 'continue' } })).body.key;
    client = new OpenAI({ apiKey: key, baseURL: `${t.url}/openai/v1`, maxRetries: 0 });
  });
  afterAll(async () => { await t?.close(); await upstream?.close(); });

  /** One streamed turn as Continue reads it: the text, and the tool calls reassembled from their deltas. */
  async function turn(body: Record<string, unknown>) {
    const stream = await client.chat.completions.create({ ...body, stream: true } as never) as unknown as AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>;
    let text = '';
    let finish: string | null = null;
    const calls: Array<{ id: string; name: string; arguments: string }> = [];
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (!choice) continue;
      text += choice.delta.content ?? '';
      for (const d of choice.delta.tool_calls ?? []) {
        calls[d.index] ??= { id: '', name: '', arguments: '' };
        if (d.id) calls[d.index]!.id = d.id;
        if (d.function?.name) calls[d.index]!.name += d.function.name;
        calls[d.index]!.arguments += d.function?.arguments ?? '';
      }
      finish = choice.finish_reason ?? finish;
    }
    return { text, finish, calls };
  }

  it('against the sandbox model: a valid call of the first tool, then a text answer to its result', async () => {
    const first = await turn({ ...TURN, model: 'sandbox' });
    expect(first.finish).toBe('tool_calls');
    expect(first.calls).toHaveLength(1);
    const call = first.calls[0]!;
    expect(call.name).toBe('builtin_read_file');
    expect(call.id).toMatch(/^call_/);
    const validate = new Ajv({ strict: false }).compile(TURN.tools[0].function.parameters);
    expect(validate(JSON.parse(call.arguments)), JSON.stringify(validate.errors)).toBe(true);

    const second = await turn({
      ...TURN, model: 'sandbox',
      messages: [...TURN.messages,
        { role: 'assistant', content: '', tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }] },
        { role: 'tool', tool_call_id: call.id, content: 'export const add = (a: number, b: number) => a - b;' }],
    });
    expect(second.finish).toBe('stop');
    expect(second.calls).toEqual([]);
    expect(second.text.length).toBeGreaterThan(0);
  });

  it('against an OpenAI-compatible upstream: tools, the call and its result go through unchanged', async () => {
    const first = await turn(TURN);
    expect(first).toMatchObject({ finish: 'tool_calls', calls: [{ id: 'call_up1', name: 'builtin_read_file', arguments: '{"filepath":"src/math.ts"}' }] });
    const sent = upstream.requests.at(-1)!.body;
    expect(sent.tools).toEqual(TURN.tools);
    expect(sent.messages).toEqual(TURN.messages);
    expect(sent.max_tokens).toBe(TURN.max_tokens);

    upstream.script({ reply: 'The subtraction in add() is the bug; it now adds.', toolCalls: [] });
    const result = 'export const add = (a: number, b: number) => a - b;';
    const second = await turn({
      ...TURN,
      messages: [...TURN.messages,
        { role: 'assistant', content: '', tool_calls: [{ id: 'call_up1', type: 'function', function: { name: 'builtin_read_file', arguments: '{"filepath":"src/math.ts"}' } }] },
        { role: 'tool', tool_call_id: 'call_up1', content: result }],
    });
    expect(second).toMatchObject({ finish: 'stop', text: 'The subtraction in add() is the bug; it now adds.' });
    const resent = upstream.requests.at(-1)!.body.messages;
    expect(resent.at(-2)).toMatchObject({ role: 'assistant', tool_calls: [{ id: 'call_up1', type: 'function', function: { name: 'builtin_read_file', arguments: '{"filepath":"src/math.ts"}' } }] });
    expect(resent.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_up1', content: result });
  });
});
