/** The Anthropic provider's translation of the conversation model (providers/conversation.ts), unit by unit. */
import { describe, expect, it } from 'vitest';
import { AppError } from '../../errors.js';
import { createAnthropicProvider, mapAnthropicStop, structuredTool, toAnthropicMessages } from './anthropic-provider.js';

describe('toAnthropicMessages', () => {
  it('keeps plain turns, drops system (sent as `system`), makes tool calls tool_use blocks after the text and tool results one user message', () => {
    expect(toAnthropicMessages([
      { role: 'system', content: 's' },
      { role: 'user', content: 'q' },
      { role: 'assistant', content: '', toolCalls: [{ id: 't1', name: 'a', arguments: '{"x":1}' }, { id: 't2', name: 'b', arguments: '' }] },
      { role: 'tool', content: 'r1', toolCallId: 't1' },
      { role: 'tool', content: 'r2', toolCallId: 't2' },
      { role: 'user', content: 'and?' },
    ])).toEqual([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'a', input: { x: 1 } }, { type: 'tool_use', id: 't2', name: 'b', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'r1' }, { type: 'tool_result', tool_use_id: 't2', content: 'r2' }] },
      { role: 'user', content: 'and?' },
    ]);
  });

  it('arguments that are not a JSON object are a 400 naming them (Anthropic takes an object as input)', () => {
    for (const args of ['[1,2]', 'not json', '"text"', 'null']) {
      let error: unknown;
      try { toAnthropicMessages([{ role: 'user', content: 'q' }, { role: 'assistant', content: '', toolCalls: [{ id: 't', name: 'a', arguments: args }] }]); } catch (e) { error = e; }
      expect(error, args).toBeInstanceOf(AppError);
      expect((error as AppError).extra.errors?.[0]?.path).toBe('/messages/1/tool_calls/0/function/arguments');
    }
  });
});

describe('request bodies', () => {
  const provider = createAnthropicProvider({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k', timeoutMs: 1000, maxRetries: 0 });
  /** The body the provider would send: captured from a fetch that answers nothing. */
  async function bodyOf(options: Parameters<typeof provider.generate>[0]): Promise<any> {
    let sent: any;
    const p = createAnthropicProvider({
      baseUrl: 'http://127.0.0.1:9', apiKey: 'k', timeoutMs: 1000, maxRetries: 0,
      fetch: (async (_url: string, init: RequestInit) => { sent = JSON.parse(String(init.body)); return new Response(JSON.stringify({ content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn' }), { status: 200, headers: { 'content-type': 'application/json' } }); }) as typeof fetch,
    });
    await p.generate(options);
    return sent;
  }
  const base = { model: 'claude', messages: [{ role: 'user' as const, content: 'q' }] };
  const tools = [{ name: 'a', description: 'A', parameters: { type: 'object', properties: { x: { type: 'integer' } } } }, { name: 'b' }];

  it('tools as input_schema (an empty object schema when none), tool_choice mapped, parallel_tool_calls false as disable_parallel_tool_use', async () => {
    expect(provider.conversation).toEqual({ tools: true, responseFormats: ['json_object', 'json_schema'] });
    const sent = await bodyOf({ ...base, tools, toolChoice: 'required', parallelToolCalls: false });
    expect(sent.tools).toEqual([{ name: 'a', description: 'A', input_schema: tools[0]!.parameters }, { name: 'b', input_schema: { type: 'object', properties: {} } }]);
    expect(sent.tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true });
    expect((await bodyOf({ ...base, tools, toolChoice: { name: 'b' } })).tool_choice).toEqual({ type: 'tool', name: 'b' });
    expect((await bodyOf({ ...base, tools, toolChoice: 'none' })).tool_choice).toEqual({ type: 'none' });
    expect((await bodyOf({ ...base, tools })).tool_choice).toBeUndefined();
    // A plain call is unchanged: no tools, string content.
    expect(await bodyOf(base)).toEqual({ model: 'claude', max_tokens: 4096, messages: [{ role: 'user', content: 'q' }] });
  });

  it('a response format is a forced tool; its input comes back as the text, finish stop', async () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] };
    expect(structuredTool({ type: 'json_schema', name: 'doc', schema })).toMatchObject({ name: 'doc', input_schema: schema });
    const sent = await bodyOf({ ...base, responseFormat: { type: 'json_schema', name: 'doc', schema } });
    expect(sent.tool_choice).toEqual({ type: 'tool', name: 'doc' });
    let captured: any;
    const p = createAnthropicProvider({
      baseUrl: 'http://127.0.0.1:9', apiKey: 'k', timeoutMs: 1000, maxRetries: 0,
      fetch: (async (_u: string, init: RequestInit) => { captured = JSON.parse(String(init.body)); return new Response(JSON.stringify({ content: [{ type: 'tool_use', id: 'toolu_1', name: 'doc', input: { a: 'x' } }], stop_reason: 'tool_use', usage: { input_tokens: 3, output_tokens: 4 } }), { status: 200, headers: { 'content-type': 'application/json' } }); }) as typeof fetch,
    });
    const out = await p.generate({ ...base, responseFormat: { type: 'json_object' } });
    expect(captured.tools).toEqual([expect.objectContaining({ name: 'json_object', input_schema: { type: 'object' } })]);
    expect(out).toEqual({ text: '{"a":"x"}', usage: { promptTokens: 3, completionTokens: 4 }, finishReason: 'stop' });
    // With tools as well, or a schema that is not an object: a 400 naming the field.
    await expect(bodyOf({ ...base, tools, responseFormat: { type: 'json_object' } })).rejects.toMatchObject({ extra: { errors: [{ path: '/response_format' }] } });
    await expect(bodyOf({ ...base, responseFormat: { type: 'json_schema', name: 'arr', schema: { type: 'array' } } })).rejects.toMatchObject({ extra: { errors: [{ path: '/response_format/json_schema/schema' }] } });
  });

  it('stop_reason tool_use is finish tool-calls', () => {
    expect(mapAnthropicStop('tool_use')).toBe('tool-calls');
  });
});
