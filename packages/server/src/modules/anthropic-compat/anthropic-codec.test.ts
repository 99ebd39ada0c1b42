import { describe, expect, it } from 'vitest';
import { AppError } from '../../errors.js';
import { fromCountTokensBody, fromMessagesBody, systemText, toConversation, toMessages } from './anthropic-request.js';
import { messageIdFor, toMessage, toolInput, toolUseId, toStopReason } from './anthropic-response.js';
import type { AnthropicMessagesBody } from './anthropic-schemas.js';
import type { ChatCallResult } from '../generate/chat-call.js';

/** The 400 a codec throws: its message and the JSON pointer it names. */
function refusal(fn: () => unknown): { message: string; path: string | undefined } {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    const e = error as AppError;
    expect(e.code).toBe('validation_failed');
    return { message: e.message, path: e.extra.errors?.[0]?.path };
  }
  throw new Error('expected a 400');
}

const body = (extra: Partial<AnthropicMessagesBody>): AnthropicMessagesBody => ({ model: 'sandbox', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], ...extra });

describe('the Messages API request codec', () => {
  it('a plain request: system first, text blocks joined, sampling and stop sequences carried, no conversation options', () => {
    const spec = fromMessagesBody(body({
      system: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: 'Use Go.', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello, ' }, { type: 'text', text: 'world' }] }, { role: 'assistant', content: 'Hi.' }, { role: 'user', content: 'more' }],
      temperature: 0.5, top_p: 0.9, top_k: 40, stop_sequences: ['\n\n'], stream: true, metadata: { user_id: 'u1' },
    }));
    expect(spec).toEqual({
      model: 'sandbox', maxTokens: 100, temperature: 0.5, topP: 0.9, topK: 40, stop: ['\n\n'], stream: true, conversation: {},
      messages: [{ role: 'system', content: 'Be brief.\n\nUse Go.' }, { role: 'user', content: 'Hello, world' }, { role: 'assistant', content: 'Hi.' }, { role: 'user', content: 'more' }],
    });
    // Absent fields stay absent (no system message, no stop list).
    expect(fromMessagesBody(body({ stop_sequences: [] }))).toMatchObject({ messages: [{ role: 'user', content: 'hi' }], stop: undefined, stream: false });
  });

  it('tool_use blocks are the assistant\'s tool calls (input as JSON text); tool_result blocks are tool messages before the user\'s text', () => {
    const messages = toMessages([
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: [{ type: 'thinking', thinking: '…', signature: 'x' }, { type: 'text', text: 'Looking.' }, { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }, { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'sun' }, { type: 'text', text: 'ny' }] }, { type: 'tool_result', tool_use_id: 'toolu_2', content: 'no clock', is_error: true }, { type: 'text', text: 'Thanks' }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_3' }] },
    ]);
    expect(messages).toEqual([
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: 'Looking.', toolCalls: [{ id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' }, { id: 'toolu_2', name: 'get_time', arguments: '{}' }] },
      { role: 'tool', content: 'sunny', toolCallId: 'toolu_1' },
      { role: 'tool', content: 'no clock', toolCallId: 'toolu_2', isError: true },
      { role: 'user', content: 'Thanks' },
      { role: 'tool', content: '', toolCallId: 'toolu_3' },
    ]);
  });

  it('refuses what the conversation model cannot carry, naming the field as Anthropic does', () => {
    const cases: Array<[() => unknown, string, string]> = [
      [() => toMessages([{ role: 'user', content: [{ type: 'image', source: {} }] }]), '/messages/0/content/0/type', 'messages.0.content.0.type: image blocks are not supported'],
      [() => toMessages([{ role: 'user', content: [{ type: 'document', source: {} }] }]), '/messages/0/content/0/type', 'document blocks'],
      [() => toMessages([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'image', source: {} }] }] }]), '/messages/0/content/0/content/0/type', 'image blocks are not supported'],
      [() => toMessages([{ role: 'user', content: [{ type: 'tool_use', id: 't', name: 'n', input: {} }] }]), '/messages/0/content/0/type', 'only allowed in assistant messages'],
      [() => toMessages([{ role: 'assistant', content: [{ type: 'tool_result', tool_use_id: 't' }] }]), '/messages/0/content/0/type', 'only allowed in user messages'],
      [() => toMessages([{ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'n', input: [1] }] }]), '/messages/0/content/0/input', 'must be an object'],
      [() => toMessages([{ role: 'assistant', content: [{ type: 'tool_use', name: 'n', input: {} }] }]), '/messages/0/content/0/id', 'Field required'],
      [() => toMessages([{ role: 'user', content: [{ type: 'text' }] }]), '/messages/0/content/0/text', 'Field required'],
      [() => toMessages([{ role: 'user', content: [{ type: 'thinking', thinking: 'x' }] }]), '/messages/0/content/0/type', 'thinking blocks are only allowed in assistant messages'],
      [() => systemText([{ type: 'image' }]), '/system/0/type', 'must be "text"'],
      [() => fromMessagesBody(body({ thinking: { type: 'enabled', budget_tokens: 1024 } })), '/thinking/type', 'extended thinking is not supported'],
      [() => toConversation({ tools: [{ type: 'bash_20250124', name: 'bash' }] }), '/tools/0/type', 'server tool'],
      [() => toConversation({ tools: [{ name: 'a' }] }), '/tools/0/input_schema', 'Field required'],
      [() => toConversation({ tools: [{ name: 'a', input_schema: { type: 'string' } }] }), '/tools/0/input_schema/type', 'must be "object"'],
      [() => toConversation({ tools: [{ name: 'a', input_schema: { type: 'object' } }, { name: 'a', input_schema: { type: 'object' } }] }), '/tools/1/name', 'unique'],
      [() => toConversation({ tools: [{ name: 'a', input_schema: { type: 'object', description: 'x'.repeat(100_001) } }] }), '/tools/0/input_schema', 'at most'],
      [() => toConversation({ tool_choice: { type: 'any' } }), '/tool_choice/type', 'no tools'],
      [() => toConversation({ tools: [{ name: 'a', input_schema: { type: 'object' } }], tool_choice: { type: 'tool' } }), '/tool_choice/name', 'Field required'],
      [() => toConversation({ tools: [{ name: 'a', input_schema: { type: 'object' } }], tool_choice: { type: 'tool', name: 'b' } }), '/tool_choice/name', 'not one of the request\'s tools'],
    ];
    for (const [fn, path, message] of cases) {
      const r = refusal(fn);
      expect(r.path, message).toBe(path);
      expect(r.message).toContain(message);
      expect(r.message.startsWith(`${path.slice(1).replace(/\//g, '.')}: `)).toBe(true);
    }
  });

  it('tools and tool_choice: input_schema is the parameters; auto/any/tool/none; disable_parallel_tool_use', () => {
    const tools = [{ name: 'get_weather', description: 'Forecast', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }, { name: 'x', type: 'custom', input_schema: { type: 'object' } }];
    expect(toConversation({ tools })).toEqual({ tools: [{ name: 'get_weather', description: 'Forecast', parameters: tools[0]!.input_schema }, { name: 'x', parameters: { type: 'object' } }] });
    expect(toConversation({ tools, tool_choice: { type: 'auto' } }).toolChoice).toBe('auto');
    expect(toConversation({ tools, tool_choice: { type: 'any', disable_parallel_tool_use: true } })).toMatchObject({ toolChoice: 'required', parallelToolCalls: false });
    expect(toConversation({ tools, tool_choice: { type: 'tool', name: 'x' } }).toolChoice).toEqual({ name: 'x' });
    expect(toConversation({ tools, tool_choice: { type: 'none' } }).toolChoice).toBe('none');
    // auto / none without tools say nothing.
    expect(toConversation({ tool_choice: { type: 'none' } })).toEqual({});
    expect(toConversation({ tool_choice: { type: 'auto', disable_parallel_tool_use: true } })).toEqual({});
  });

  it('count_tokens reads the conversation the same way (system, tools), without the answer\'s settings', () => {
    const spec = fromCountTokensBody({ model: 'm', system: 'S', messages: [{ role: 'user', content: 'hi' }], tools: [{ name: 'a', input_schema: { type: 'object' } }] });
    expect(spec).toEqual({ model: 'm', messages: [{ role: 'system', content: 'S' }, { role: 'user', content: 'hi' }], conversation: { tools: [{ name: 'a', parameters: { type: 'object' } }] } });
  });
});

describe('the Messages API response codec', () => {
  const result = (r: Partial<ChatCallResult>): ChatCallResult => ({
    id: 'gen_abc', created: 0, totalMs: 1, text: '', usage: { promptTokens: 10, completionTokens: 5 }, finishReason: 'stop', tokens: 15, costMicros: 0,
    model: { id: 'gpt-test' } as ChatCallResult['model'], upstreamMs: 1, committed: Promise.resolve(), ...r,
  });

  it('stop reasons', () => {
    expect(toStopReason('stop', undefined)).toEqual({ stop_reason: 'end_turn', stop_sequence: null });
    expect(toStopReason('stop', 'END')).toEqual({ stop_reason: 'stop_sequence', stop_sequence: 'END' });
    expect(toStopReason('length', undefined)).toEqual({ stop_reason: 'max_tokens', stop_sequence: null });
    expect(toStopReason('tool-calls', undefined)).toEqual({ stop_reason: 'tool_use', stop_sequence: null });
    expect(toStopReason('content-filter', undefined)).toEqual({ stop_reason: 'refusal', stop_sequence: null });
    expect(toStopReason('other', undefined)).toEqual({ stop_reason: 'end_turn', stop_sequence: null });
  });

  it('ids: msg_ shares the history record\'s random part; tool calls get toolu_ ids, stable for the same call', () => {
    expect(messageIdFor('gen_abc')).toBe('msg_abc');
    expect(toolUseId('toolu_x', 'msg_a', 0)).toBe('toolu_x');
    expect(toolUseId('call_x', 'msg_a', 0)).toBe('toolu_x');
    expect(toolUseId('chatcmpl-tool-9', 'msg_a', 0)).toBe('toolu_chatcmpl-tool-9');
    expect(toolUseId('', 'msg_a', 2)).toBe('toolu_a_2');
  });

  it('tool input: the JSON object, {} for arguments cut short or not an object', () => {
    expect(toolInput('{"a":1}')).toEqual({ a: 1 });
    expect(toolInput('')).toEqual({});
    expect(toolInput('{"a":')).toEqual({});
    expect(toolInput('[1]')).toEqual({});
  });

  it('the message: a text block (also when empty and nothing else), then tool_use blocks; usage with zero cache counts', () => {
    expect(toMessage('msg_1', result({ text: 'Hi' }))).toEqual({
      id: 'msg_1', type: 'message', role: 'assistant', model: 'gpt-test', content: [{ type: 'text', text: 'Hi' }], stop_reason: 'end_turn', stop_sequence: null,
      usage: { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 }, output_tokens: 5, service_tier: 'standard' },
    });
    expect(toMessage('msg_1', result({})).content).toEqual([{ type: 'text', text: '' }]);
    const withTools = toMessage('msg_1', result({ text: '', finishReason: 'tool-calls', toolCalls: [{ id: 'call_1', name: 'f', arguments: '{"q":"x"}' }] }));
    expect(withTools.content).toEqual([{ type: 'tool_use', id: 'toolu_1', name: 'f', input: { q: 'x' } }]);
    expect(withTools.stop_reason).toBe('tool_use');
    expect(toMessage('msg_1', result({ text: 'Let me look.', finishReason: 'tool-calls', toolCalls: [{ id: 'toolu_9', name: 'f', arguments: '{}' }] })).content)
      .toEqual([{ type: 'text', text: 'Let me look.' }, { type: 'tool_use', id: 'toolu_9', name: 'f', input: {} }]);
  });
});
