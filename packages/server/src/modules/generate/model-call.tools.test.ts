/** callModel with tool calls (providers/conversation.ts): pieces counted and capped as output, calls assembled, the prompt bound grown by tool parts, fallbacks only to models that honour them. */
import { describe, expect, it } from 'vitest';
import { MemoryLimitStore } from '../../limits/memory-limit-store.js';
import { TokenSpend, type SpendSubject } from '../../limits/token-spend.js';
import type { RegisteredModel } from '../../providers/model-registry.js';
import { AppError, ProviderError } from '../../errors.js';
import type { ModelProvider, StreamPart, ToolCallDelta } from '../../providers/provider.js';
import { callModel, promptTokenBound, tokensToReserve } from './model-call.js';

const subject = (): SpendSubject => ({ user: { id: `usr_${Math.random().toString(36).slice(2)}` }, org: { plan: 'free' }, environment: 'production' });
const TOOLS = [{ name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];
const messages = [{ role: 'user' as const, content: 'Weather in Paris?' }];

/** A provider that streams `parts` (then a finish without usage), or fails with `fail` after `failAfter` parts. */
function scripted(parts: StreamPart[], opts: { tools?: boolean; fail?: Error; failAfter?: number; finish?: 'tool-calls' | 'stop' } = {}): ModelProvider & { calls: number } {
  const provider = {
    name: 'scripted',
    calls: 0,
    ...(opts.tools === false ? {} : { conversation: { tools: true, responseFormats: ['json_schema' as const] } }),
    generate: () => { throw new Error('not used'); },
    async *stream() {
      provider.calls++;
      for (let i = 0; i < parts.length; i++) {
        if (opts.fail && i === (opts.failAfter ?? 0)) throw opts.fail;
        yield parts[i]!;
      }
      if (opts.fail && (opts.failAfter ?? 0) >= parts.length) throw opts.fail;
      yield { type: 'finish' as const, usage: {}, finishReason: opts.finish ?? 'tool-calls' };
    },
  };
  return provider;
}
const model = (id: string, provider: ModelProvider, fallbacks?: RegisteredModel[]): RegisteredModel => ({ id, upstreamId: id, provider, description: id, ...(fallbacks ? { fallbacks } : {}) });
const piece = (d: Omit<ToolCallDelta, 'type'>): ToolCallDelta => ({ type: 'tool-call', ...d });
const CALL: StreamPart[] = [piece({ index: 0, id: 'call_1', name: 'get_weather', arguments: '' }), piece({ index: 0, arguments: '{"city"' }), piece({ index: 0, arguments: ':"Paris"}' })];

describe('callModel with tool calls', () => {
  it('assembles the calls, hands each piece to onToolCall, and charges each piece as an output token', async () => {
    const spend = new TokenSpend(new MemoryLimitStore());
    const seen: ToolCallDelta[] = [];
    const result = await callModel(spend, { subject: subject(), model: model('up', scripted([{ type: 'text', text: 'Checking.' }, ...CALL])), messages, tools: TOOLS, onToolCall: (d) => { seen.push(d); } });
    expect(result.text).toBe('Checking.');
    expect(result.toolCalls).toEqual([{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }]);
    expect(result.finishReason).toBe('tool-calls');
    expect(seen).toEqual(CALL);
    expect(result.usage.completionTokens).toBe(4);
    expect(result.usage.promptTokens).toBe(promptTokenBound(messages, undefined, { tools: TOOLS }));
  });

  it('the output cap cuts tool-call pieces as it cuts text: finish length', async () => {
    const spend = new TokenSpend(new MemoryLimitStore());
    const result = await callModel(spend, { subject: subject(), model: model('up', scripted([{ type: 'text', text: 'x' }, ...CALL])), messages, tools: TOOLS, maxTokens: 2 });
    expect(result.finishReason).toBe('length');
    expect(result.usage.completionTokens).toBe(2);
    expect(result.toolCalls).toEqual([{ id: 'call_1', name: 'get_weather', arguments: '' }]);
  });

  it('tool definitions, tool calls and tool results count in the prompt bound; a plain call\'s bound is unchanged', () => {
    const plain = promptTokenBound(messages);
    expect(promptTokenBound(messages, undefined, {})).toBe(plain);
    expect(promptTokenBound(messages, undefined, { tools: TOOLS })).toBe(plain + Buffer.byteLength(JSON.stringify(TOOLS[0])));
    const turns = [...messages, { role: 'assistant' as const, content: '', toolCalls: [{ id: 'c1', name: 'f', arguments: '{"a":1}' }] }, { role: 'tool' as const, content: 'r', toolCallId: 'c1' }];
    expect(promptTokenBound(turns)).toBe(32 + 3 * 8 + Buffer.byteLength('Weather in Paris?') + (8 + 2 + 1 + 7) + 1 + 2);
    const s = subject();
    const up = model('up', scripted(CALL));
    expect(tokensToReserve({ subject: s, model: up, messages, tools: TOOLS, maxTokens: 10 })).toBe(promptTokenBound(messages, undefined, { tools: TOOLS }) + 10);
  });

  it('falls back before the first piece only to models that honour tools, never after a tool-call piece', async () => {
    const spend = new TokenSpend(new MemoryLimitStore());
    const down = () => new ProviderError('upstream_error', 'down', true, 503);
    const textOnly = scripted([{ type: 'text', text: 'no tools here' }], { tools: false, finish: 'stop' });
    const good = scripted(CALL);
    const first = model('first', scripted(CALL, { fail: down(), failAfter: 0 }), [model('text-only', textOnly), model('good', good)]);
    const served = await callModel(spend, { subject: subject(), model: first, messages, tools: TOOLS });
    expect(served.model.id).toBe('good');
    expect(textOnly.calls).toBe(0);
    const late = model('late', scripted(CALL, { fail: down(), failAfter: 1 }), [model('good2', good)]);
    await expect(callModel(spend, { subject: subject(), model: late, messages, tools: TOOLS })).rejects.toBeInstanceOf(ProviderError);
  });

  it('a model that cannot honour tools, a response format or tool turns is a 400 naming the field', async () => {
    const spend = new TokenSpend(new MemoryLimitStore());
    const plain = model('plain', scripted([{ type: 'text', text: 'x' }], { tools: false, finish: 'stop' }));
    const refused = async (extra: object) => {
      const error = await callModel(spend, { subject: subject(), model: plain, messages, ...extra }).then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(AppError);
      return (error as AppError).extra.errors?.[0]?.path;
    };
    expect(await refused({ tools: TOOLS })).toBe('/tools');
    expect(await refused({ responseFormat: { type: 'json_object' } })).toBe('/response_format');
    expect(await refused({ messages: [...messages, { role: 'tool', content: 'r', toolCallId: 'c' }] })).toBe('/messages/1');
    // tool_choice "none" or a text response format asks nothing of it.
    expect((await callModel(spend, { subject: subject(), model: plain, messages, responseFormat: { type: 'text' } })).text).toBe('x');
  });
});
