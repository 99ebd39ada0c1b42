/**
 * Tool calls from recorded vendor transcripts (fixtures/*tool*), replayed byte for byte to the OpenAI-compatible
 * and Anthropic providers, whole and with every SSE event split mid-character: OpenAI's parallel calls
 * (the first call's head in the role chunk, argument fragments with only the index, finish_reason
 * tool_calls, usage in the last chunk) and Anthropic's text block followed by a tool_use block
 * (content_block_start with id and name, input_json_delta fragments, stop_reason tool_use). Both come out
 * as the same internal parts (providers/conversation.ts): text, tool-call deltas, finish `tool-calls`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { ToolCallAssembler, type ToolDefinition } from '../../src/providers/conversation.js';
import type { ModelCallOptions, ModelProvider, StreamPart } from '../../src/providers/provider.js';
import { fixture, sseEvents, startFixtureServer, type FixtureServer, type Scenario } from './fixture-server.js';
import { collect, textOf } from './provider-harness.js';

const TOOLS: ToolDefinition[] = [
  { name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, required: ['city', 'unit'] } },
  { name: 'get_time', parameters: { type: 'object', properties: { timezone: { type: 'string' } }, required: ['timezone'] } },
];

interface ToolWire {
  vendor: string;
  scenario: Scenario;
  create(baseUrl: string): ModelProvider;
  /** What a provider makes of the recording. */
  text: string;
  calls: Array<{ id: string; name: string; input: unknown }>;
  usage: { promptTokens: number; completionTokens: number };
  /** The offered tools as the request carried them, in the vendor's fields. */
  sentTools(body: any): unknown;
}

const http = (create: typeof createOpenAIProvider | typeof createAnthropicProvider) => (baseUrl: string) =>
  create({ baseUrl, apiKey: 'sk-conformance', timeoutMs: 1_000, maxRetries: 0 });

const WIRES: ToolWire[] = [
  {
    vendor: 'OpenAI',
    scenario: { json: 'openai-chat-tool-calls.json', sse: 'openai-chat-tool-calls-stream.sse' },
    create: http(createOpenAIProvider),
    text: '',
    calls: [{ id: 'call_kTNvZ1wVWVq3nbh3OcIW5lzn', name: 'get_weather', input: { city: 'París', unit: 'celsius' } }, { id: 'call_Qm8pX2vR7nJd4TzL0aWbC9eH', name: 'get_time', input: { timezone: 'Europe/Paris' } }],
    usage: { promptTokens: 92, completionTokens: 41 },
    sentTools: (body) => body.tools.map((t: any) => [t.type, t.function.name, t.function.parameters]),
  },
  {
    vendor: 'Anthropic',
    scenario: { json: 'anthropic-messages-tool-use.json', sse: 'anthropic-messages-tool-use-stream.sse' },
    create: http(createAnthropicProvider),
    text: 'I\'ll look up the weather in Paris.',
    calls: [{ id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', input: { city: 'París', unit: 'celsius' } }],
    usage: { promptTokens: 412, completionTokens: 58 },
    sentTools: (body) => body.tools.map((t: any) => ['function', t.name, t.input_schema]),
  },
];

describe.each(WIRES)('$vendor tool-call recordings', (wire) => {
  let server: FixtureServer;
  let provider: ModelProvider;
  const call = (): ModelCallOptions => ({ model: 'm', messages: [{ role: 'user', content: 'Weather and time in Paris?' }], tools: TOOLS, toolChoice: 'auto', maxTokens: 200 });
  const parsed = (calls: Array<{ id: string; name: string; arguments: string }>) => calls.map((c) => ({ id: c.id, name: c.name, input: JSON.parse(c.arguments) }));

  beforeAll(async () => {
    server = await startFixtureServer(wire.scenario);
    provider = wire.create(server.url);
  });
  afterAll(async () => { await server?.close(); });

  it('the recordings parse, every data line JSON or [DONE]', () => {
    expect(() => JSON.parse(fixture(wire.scenario.json!).toString('utf8'))).not.toThrow();
    for (const raw of sseEvents(fixture(wire.scenario.sse!))) {
      const data = raw.toString('utf8').split('\n').find((l) => l.startsWith('data:'))!.slice(5).trim();
      if (data !== '[DONE]') expect(() => JSON.parse(data), data).not.toThrow();
    }
  });

  it('generate: the text, the whole tool calls and finish tool-calls; the tools went out in the vendor\'s fields', async () => {
    server.reset();
    const out = await provider.generate(call());
    expect(out.text).toBe(wire.text);
    expect(out.finishReason).toBe('tool-calls');
    expect(out.usage).toEqual(wire.usage);
    expect(parsed(out.toolCalls!)).toEqual(wire.calls);
    expect(wire.sentTools(server.requests[0]!.body)).toEqual(TOOLS.map((t) => ['function', t.name, t.parameters]));
  });

  it.each([false, true])('stream (events split: %s): text, then tool-call parts that assemble into the same calls, then finish', async (split) => {
    server.reset();
    server.serve(wire.scenario, { split });
    const parts: StreamPart[] = await collect(provider.stream(call()));
    expect(textOf(parts)).toBe(wire.text);
    const finish = parts.at(-1)!;
    expect(finish).toEqual({ type: 'finish', usage: wire.usage, finishReason: 'tool-calls' });
    const pieces = parts.filter((p) => p.type === 'tool-call');
    // Each call's first piece names it (id and name); the rest carry only argument fragments.
    const heads = pieces.filter((p) => p.id !== undefined);
    expect(heads.map((p) => [p.index, p.id, p.name])).toEqual(wire.calls.map((c, i) => [i, c.id, c.name]));
    expect(pieces.filter((p) => p.id === undefined).every((p) => p.name === undefined)).toBe(true);
    const assembler = new ToolCallAssembler();
    for (const p of pieces) assembler.add(p);
    expect(parsed(assembler.result())).toEqual(wire.calls);
    expect(server.requests[0]!.body.stream).toBe(true);
  });
});
