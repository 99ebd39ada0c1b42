/** The OpenAI-compatible provider with tools: fields passed through under OpenAI's names, tool calls read from JSON and from streams however a server chunks them. */
import { describe, expect, it } from 'vitest';
import { ToolCallAssembler } from '../conversation.js';
import type { ModelCallOptions, StreamPart } from '../provider.js';
import { createOpenAIProvider, mapOpenAIFinish } from './openai-provider.js';

/** A provider whose fetch records the body and answers `answer` (JSON, or SSE from data lines). */
function providerAnswering(answer: { json?: unknown; sse?: unknown[] }) {
  const sent: any[] = [];
  const provider = createOpenAIProvider({
    baseUrl: 'http://127.0.0.1:9', apiKey: '', timeoutMs: 1000, maxRetries: 0,
    fetch: (async (_url: string, init: RequestInit) => {
      sent.push(JSON.parse(String(init.body)));
      if (answer.sse) {
        const body = answer.sse.map((d) => `data: ${typeof d === 'string' ? d : JSON.stringify(d)}\n\n`).join('');
        return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
      }
      return new Response(JSON.stringify(answer.json), { status: 200, headers: { 'content-type': 'application/json' } });
    }) as typeof fetch,
  });
  return { provider, sent };
}

const tools = [{ name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true }];
const call: ModelCallOptions = {
  model: 'qwen', tools, toolChoice: { name: 'get_weather' }, parallelToolCalls: false, responseFormat: { type: 'json_schema', name: 'w', schema: { type: 'object' }, strict: true },
  messages: [
    { role: 'user', content: 'q' },
    { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
    { role: 'tool', content: 'sunny', toolCallId: 'call_1' },
  ],
};
const chunk = (delta: unknown, finish: string | null = null) => ({ choices: [{ index: 0, delta, finish_reason: finish }] });

describe('the OpenAI-compatible provider with tools', () => {
  it('sends tools, tool_choice, parallel_tool_calls, response_format and the tool turns in OpenAI\'s wire format', async () => {
    const { provider, sent } = providerAnswering({ json: { choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }] } });
    await provider.generate(call);
    expect(sent[0]).toMatchObject({
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: tools[0]!.parameters, strict: true } }],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
      response_format: { type: 'json_schema', json_schema: { name: 'w', schema: { type: 'object' }, strict: true } },
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      ],
    });
    // A plain call carries none of them.
    await provider.generate({ model: 'qwen', messages: [{ role: 'user', content: 'q' }] });
    expect(Object.keys(sent[1]).sort()).toEqual(['messages', 'model']);
  });

  it('reads message.tool_calls and finish_reason tool_calls from a JSON answer', async () => {
    const { provider } = providerAnswering({ json: { choices: [{ message: { content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 5, completion_tokens: 6 } } });
    expect(await provider.generate(call)).toEqual({ text: '', toolCalls: [{ id: 'c1', name: 'f', arguments: '{}' }], finishReason: 'tool-calls', usage: { promptTokens: 5, completionTokens: 6 } });
    expect(mapOpenAIFinish('function_call')).toBe('tool-calls');
  });

  it('streams: a server that sends whole calls, several in one chunk with text beside them (vLLM, Ollama), gives every piece in order', async () => {
    const { provider } = providerAnswering({ sse: [
      chunk({ role: 'assistant', content: 'Looking.', tool_calls: [
        { index: 0, id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
        { index: 1, id: 'c2', type: 'function', function: { name: 'g', arguments: '{"b":2}' } },
      ] }),
      chunk({}, 'tool_calls'),
      '[DONE]',
    ] });
    const parts: StreamPart[] = [];
    for await (const p of provider.stream(call)) parts.push(p);
    expect(parts).toEqual([
      { type: 'text', text: 'Looking.' },
      { type: 'tool-call', index: 0, id: 'c1', name: 'f', arguments: '{"a":1}' },
      { type: 'tool-call', index: 1, id: 'c2', name: 'g', arguments: '{"b":2}' },
      { type: 'finish', usage: {}, finishReason: 'tool-calls' },
    ]);
  });

  it('streams: OpenAI\'s fragments (head, then arguments with only the index) assemble into the calls; a server that ignores stream:true is read from its JSON', async () => {
    const { provider } = providerAnswering({ sse: [
      chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'f', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a"' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }),
      chunk({}, 'tool_calls'),
      '[DONE]',
    ] });
    const assembler = new ToolCallAssembler();
    for await (const p of provider.stream(call)) if (p.type === 'tool-call') assembler.add(p);
    expect(assembler.result()).toEqual([{ id: 'c1', name: 'f', arguments: '{"a":1}' }]);

    const json = providerAnswering({ json: { choices: [{ message: { content: null, tool_calls: [{ id: 'c9', type: 'function', function: { name: 'h', arguments: '{"z":0}' } }] }, finish_reason: 'tool_calls' }] } });
    const parts: StreamPart[] = [];
    for await (const p of json.provider.stream(call)) parts.push(p);
    expect(parts).toEqual([{ type: 'tool-call', index: 0, id: 'c9', name: 'h', arguments: '{"z":0}' }, { type: 'finish', usage: {}, finishReason: 'tool-calls' }]);
  });
});
