import { describe, expect, it } from 'vitest';
import { AppError } from '../../errors.js';
import { fromResponsesBody, toInputMessages } from './responses-request.js';
import { outputItems, outputMessages, responseObject, statusOf } from './responses-object.js';
import { OutputStream } from './responses-sse.js';
import { inResponsesTerms } from './responses-service.js';

const paramOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return (error as AppError).extra.errors?.[0]?.path;
  }
  throw new Error('expected a 400');
};

describe('Responses API inbound codec', () => {
  it('a string input is one user message; instructions stay apart from the conversation', () => {
    const spec = fromResponsesBody({ input: 'hi', instructions: 'Be brief.' });
    expect(spec.input).toEqual([{ role: 'user', content: 'hi' }]);
    expect(spec.instructions).toBe('Be brief.');
    expect(spec).toMatchObject({ store: true, stream: false, previousResponseId: null, metadata: {}, conversation: {} });
    expect(spec.echo).toEqual({ tools: [], tool_choice: 'auto', text: { format: { type: 'text' } }, parallel_tool_calls: true });
  });

  it('items: developer is system, text parts joined, function calls join the assistant turn before them, outputs are tool messages', () => {
    const { messages, outputs } = toInputMessages([
      { role: 'developer', content: 'rules' },
      { role: 'user', content: [{ type: 'input_text', text: 'a' }, { type: 'input_text', text: 'b' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Let me look.' }], id: 'msg_1', status: 'completed' },
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}', id: 'fc_1', status: 'completed' },
      { type: 'function_call', call_id: 'c2', name: 'g', arguments: '{"x":1}' },
      { type: 'function_call_output', call_id: 'c1', output: 'one' },
      { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_text', text: 'two' }] },
      { type: 'reasoning', id: 'rs_1' },
      { type: 'function_call', call_id: 'c3', name: 'f', arguments: '{}' },
    ]);
    expect(messages).toEqual([
      { role: 'system', content: 'rules' },
      { role: 'user', content: 'ab' },
      { role: 'assistant', content: 'Let me look.', toolCalls: [{ id: 'c1', name: 'f', arguments: '{}' }, { id: 'c2', name: 'g', arguments: '{"x":1}' }] },
      { role: 'tool', content: 'one', toolCallId: 'c1' },
      { role: 'tool', content: 'two', toolCallId: 'c2' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c3', name: 'f', arguments: '{}' }] },
    ]);
    expect(outputs).toEqual([{ callId: 'c1', param: 'input[5].call_id' }, { callId: 'c2', param: 'input[6].call_id' }]);
  });

  it('tools, tool_choice, parallel_tool_calls and text.format in the internal terms, echoed as OpenAI does', () => {
    const spec = fromResponsesBody({
      input: 'x', parallel_tool_calls: false, tool_choice: { type: 'function', name: 'f' },
      tools: [{ type: 'function', name: 'f', parameters: { type: 'object' }, strict: true }, { type: 'function', name: 'g', description: 'G' }],
      text: { format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true } },
    });
    expect(spec.conversation).toEqual({
      tools: [{ name: 'f', parameters: { type: 'object' }, strict: true }, { name: 'g', description: 'G' }],
      toolChoice: { name: 'f' }, parallelToolCalls: false,
      responseFormat: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true },
    });
    expect(spec.echo).toEqual({
      tools: [{ type: 'function', name: 'f', description: null, parameters: { type: 'object' }, strict: true }, { type: 'function', name: 'g', description: 'G', parameters: null, strict: null }],
      tool_choice: { type: 'function', name: 'f' }, parallel_tool_calls: false,
      text: { format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true } },
    });
    expect(fromResponsesBody({ input: 'x', text: { format: { type: 'json_object' } } }).conversation).toEqual({ responseFormat: { type: 'json_object' } });
    // tool_choice "none" without tools is echoed and carries nothing.
    expect(fromResponsesBody({ input: 'x', tool_choice: 'none' })).toMatchObject({ conversation: {}, echo: { tool_choice: 'none' } });
  });

  it('what it cannot express is a 400 naming the parameter', () => {
    expect(paramOf(() => fromResponsesBody({}))).toBe('/input');
    expect(paramOf(() => fromResponsesBody({ input: 'x', tools: [{ type: 'file_search' }] }))).toBe('/tools');
    expect(paramOf(() => fromResponsesBody({ input: 'x', tools: [{ type: 'function', name: 'f' }, { type: 'function', name: 'f' }] }))).toBe('/tools/1/name');
    expect(paramOf(() => fromResponsesBody({ input: 'x', tool_choice: { type: 'web_search_preview' } }))).toBe('/tool_choice');
    expect(paramOf(() => fromResponsesBody({ input: 'x', text: { format: { type: 'json_schema', name: 'n' } } }))).toBe('/text/format/schema');
    expect(paramOf(() => fromResponsesBody({ input: 'x', tools: [{ type: 'function', name: 'f', parameters: { type: 'object', description: 'x'.repeat(100_001) } }] }))).toBe('/tools/0/parameters');
    expect(paramOf(() => toInputMessages([{ role: 'user', content: [{ type: 'input_file' }] }]))).toBe('/input/0/content/0');
    expect(paramOf(() => toInputMessages([{ type: 'function_call', call_id: 'c', name: 'f' }]))).toBe('/input/0/arguments');
    expect(paramOf(() => toInputMessages([{ type: 'function_call_output', call_id: 'c' }]))).toBe('/input/0/output');
    expect(paramOf(() => toInputMessages([{ content: 'no role or type' }]))).toBe('/input/0/type');
  });

  it('a refusal of the call path is renamed to the Responses API\'s fields', () => {
    const e = inResponsesTerms(new AppError('validation_failed', 'Model "m" cannot honour response_format; use another.', { errors: [{ path: '/response_format', message: 'not supported' }] })) as AppError;
    expect(e.extra.errors).toEqual([{ path: '/text/format', message: 'not supported' }]);
    expect(e.message).toBe('Model "m" cannot honour text.format; use another.');
    const m = inResponsesTerms(new AppError('validation_failed', 'cannot honour messages[2] (tool calls)', { errors: [{ path: '/messages/2', message: 'x' }] })) as AppError;
    expect(m.extra.errors![0]!.path).toBe('/input');
    const other = new AppError('validation_failed', 'x', { errors: [{ path: '/tools', message: 'x' }] });
    expect(inResponsesTerms(other)).toBe(other);
  });
});

describe('Responses API outbound codec', () => {
  it('status and incomplete_details from the finish reason', () => {
    expect(statusOf('stop')).toEqual({ status: 'completed', incomplete_details: null });
    expect(statusOf('tool-calls')).toEqual({ status: 'completed', incomplete_details: null });
    expect(statusOf('length')).toEqual({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    expect(statusOf('content-filter')).toEqual({ status: 'incomplete', incomplete_details: { reason: 'content_filter' } });
  });

  it('output items: text as one message, tool calls as function_call items; back into one assistant turn', () => {
    const items = outputItems({ text: 'Looking.', finishReason: 'tool-calls', toolCalls: [{ id: 'call_1', name: 'f', arguments: '{"a":1}' }] });
    expect(items).toEqual([
      { type: 'message', id: expect.stringMatching(/^msg_[0-9a-f]{32}$/), status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Looking.', annotations: [], logprobs: [] }] },
      { type: 'function_call', id: expect.stringMatching(/^fc_[0-9a-f]{32}$/), call_id: 'call_1', name: 'f', arguments: '{"a":1}', status: 'completed' },
    ]);
    expect(outputMessages(items)).toEqual([{ role: 'assistant', content: 'Looking.', toolCalls: [{ id: 'call_1', name: 'f', arguments: '{"a":1}' }] }]);
    // Calls only: no message item. Nothing at all: one empty message.
    expect(outputItems({ text: '', finishReason: 'tool-calls', toolCalls: [{ id: 'c', name: 'f', arguments: '{}' }] }).map((i) => i.type)).toEqual(['function_call']);
    expect(outputItems({ text: '', finishReason: 'stop' })).toMatchObject([{ type: 'message', content: [{ text: '' }] }]);
    expect(outputMessages(outputItems({ text: '', finishReason: 'stop' }))).toEqual([]);
  });

  it('the response object carries the request settings', () => {
    const spec = fromResponsesBody({ input: 'x', max_output_tokens: 10, temperature: 0.2, metadata: { a: 'b' }, store: false, previous_response_id: 'resp_1' });
    const r = responseObject({ id: 'resp_2', createdAt: 1, model: 'm' }, spec, { status: 'completed', output: [], usage: null });
    expect(r).toMatchObject({ id: 'resp_2', object: 'response', created_at: 1, status: 'completed', error: null, incomplete_details: null, max_output_tokens: 10, temperature: 0.2, top_p: null, metadata: { a: 'b' }, store: false, previous_response_id: 'resp_1', instructions: null, model: 'm' });
    expect(r).not.toHaveProperty('output_text');
  });
});

describe('Responses API stream events', () => {
  const record = () => {
    const events: Array<Record<string, unknown>> = [];
    const out = new OutputStream(async (type, payload) => { events.push({ type, ...payload }); });
    return { events, out };
  };

  it('text, then two tool calls: each item opens, grows and closes in OpenAI\'s order with its output_index', async () => {
    const { events, out } = record();
    await out.text('Hel');
    await out.text('lo');
    await out.toolCall({ type: 'tool-call', index: 0, id: 'call_a', name: 'f', arguments: '' });
    await out.toolCall({ type: 'tool-call', index: 0, arguments: '{"x"' });
    await out.toolCall({ type: 'tool-call', index: 0, arguments: ':1}' });
    await out.toolCall({ type: 'tool-call', index: 1, id: 'call_b', name: 'g', arguments: '{}' });
    const items = await out.finish({ finishReason: 'tool-calls' });
    expect(events.map((e) => `${e.type}@${e.output_index}`)).toEqual([
      'response.output_item.added@0', 'response.content_part.added@0', 'response.output_text.delta@0', 'response.output_text.delta@0',
      'response.output_text.done@0', 'response.content_part.done@0', 'response.output_item.done@0',
      'response.output_item.added@1', 'response.function_call_arguments.delta@1', 'response.function_call_arguments.delta@1',
      'response.function_call_arguments.done@1', 'response.output_item.done@1',
      'response.output_item.added@2', 'response.function_call_arguments.delta@2', 'response.function_call_arguments.done@2', 'response.output_item.done@2',
    ]);
    expect(events[0]).toMatchObject({ item: { type: 'message', status: 'in_progress', content: [], role: 'assistant' } });
    expect(events[4]).toMatchObject({ text: 'Hello', content_index: 0, item_id: (events[0] as any).item.id });
    expect(events[7]).toMatchObject({ item: { type: 'function_call', status: 'in_progress', call_id: 'call_a', name: 'f', arguments: '' } });
    expect(events[10]).toMatchObject({ name: 'f', arguments: '{"x":1}' });
    expect(items).toMatchObject([
      { type: 'message', status: 'completed', content: [{ type: 'output_text', text: 'Hello', annotations: [] }] },
      { type: 'function_call', status: 'completed', call_id: 'call_a', name: 'f', arguments: '{"x":1}' },
      { type: 'function_call', status: 'completed', call_id: 'call_b', name: 'g', arguments: '{}' },
    ]);
  });

  it('an answer without output is one empty message; a cut answer closes its items as incomplete; a call without an id gets one', async () => {
    const empty = record();
    expect(await empty.out.finish({ finishReason: 'stop' })).toMatchObject([{ type: 'message', status: 'completed', content: [{ text: '' }] }]);
    const cut = record();
    await cut.out.toolCall({ type: 'tool-call', index: 0, name: 'f', arguments: '{"a' });
    const items = await cut.out.finish({ finishReason: 'length' });
    expect(items).toMatchObject([{ type: 'function_call', status: 'incomplete', call_id: expect.stringMatching(/^call_/), arguments: '{"a' }]);
  });
});
