/**
 * The recordings themselves: each one the conformance cases replay exists
 * and is what its vendor sends (every SSE data line JSON or `[DONE]`, the
 * vendor's event order, usage where the vendor puts it, the recorded
 * status), and the CRLF recordings kept their CRs (fixtures/.gitattributes).
 */
import { describe, expect, it } from 'vitest';
import { fixture, parseHttpFixture, sseEvents } from './fixture-server.js';
import { anthropicWire, openAIWire } from './wire-fixtures.js';

/** The `event:` and `data:` of each SSE event (comments skipped). */
function events(file: string): Array<{ event: string; data: string }> {
  return sseEvents(fixture(file)).flatMap((raw) => {
    const lines = raw.toString('utf8').split(/\r?\n/).filter((l) => l !== '' && !l.startsWith(':'));
    if (lines.length === 0) return [];
    const field = (name: string) => lines.find((l) => l.startsWith(`${name}:`))?.slice(name.length + 1).trimStart();
    return [{ event: field('event') ?? 'message', data: field('data') ?? '' }];
  });
}

const json = (data: string) => (data === '[DONE]' ? data : JSON.parse(data));

describe.each([openAIWire, anthropicWire])('$vendor recordings', (wire) => {
  it('every scenario names recordings that exist and parse', () => {
    for (const [name, scenario] of Object.entries(wire.scenarios)) {
      if (scenario.json) expect(() => JSON.parse(fixture(scenario.json!).toString('utf8')), name).not.toThrow();
      if (scenario.sse) for (const e of events(scenario.sse)) expect(() => json(e.data), `${name}: ${e.data}`).not.toThrow();
      if (scenario.http) expect(parseHttpFixture(fixture(scenario.http)).status, name).toBeGreaterThanOrEqual(400);
    }
  });

  it('error recordings carry the status their scenario is named for', () => {
    const status = (name: keyof typeof wire.scenarios) => parseHttpFixture(fixture(wire.scenarios[name].http!)).status;
    expect([status('rateLimited'), status('serverError'), status('overloaded'), status('badRequest'), status('unauthorized')]).toEqual([429, 500, wire.overloadedStatus, 400, 401]);
    expect(parseHttpFixture(fixture(wire.scenarios.rateLimited.http!)).headers['retry-after']).toBe('20');
  });

  it('the CRLF recording is the plain stream with CRLF line ends, byte for byte', () => {
    const crlf = fixture(wire.scenarios.crlf.sse!).toString('utf8');
    expect(crlf).toContain('\r\n\r\n');
    expect(crlf.replace(/\r\n/g, '\n')).toBe(fixture(wire.scenarios.answer.sse!).toString('utf8'));
  });
});

describe('OpenAI chat-completions stream recording', () => {
  const stream = events(openAIWire.scenarios.answer.sse!);

  it('a role chunk, content deltas, a finish_reason chunk, usage only in a last chunk with empty choices, then [DONE]', () => {
    expect(stream.at(-1)!.data).toBe('[DONE]');
    const chunks = stream.slice(0, -1).map((e) => JSON.parse(e.data));
    expect(chunks[0].choices[0].delta).toMatchObject({ role: 'assistant', content: '' });
    const usageChunk = chunks.at(-1);
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage).toMatchObject({ prompt_tokens: 24, completion_tokens: 16 });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    expect(chunks.at(-2).choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
  });

  it('the mid-stream error recording is OpenRouter\'s: a keep-alive comment, then a chunk carrying `error`', () => {
    const raw = fixture(openAIWire.scenarios.midStreamError.sse!).toString('utf8');
    expect(raw.startsWith(': OPENROUTER PROCESSING\n\n')).toBe(true);
    const last = JSON.parse(events(openAIWire.scenarios.midStreamError.sse!).at(-1)!.data);
    expect(last.error).toMatchObject({ message: 'Provider disconnected unexpectedly' });
    expect(last.choices[0].finish_reason).toBe('error');
  });
});

describe('Anthropic Messages stream recording', () => {
  it('message_start … content_block_delta … message_delta, message_stop, with pings between', () => {
    const names = events(anthropicWire.scenarios.answer.sse!).map((e) => e.event);
    expect(names).toEqual([
      'message_start', 'content_block_start', 'ping', 'content_block_delta', 'content_block_delta', 'ping',
      'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop',
    ]);
  });

  it('input tokens in message_start, the cumulative output tokens in message_delta', () => {
    const stream = events(anthropicWire.scenarios.answer.sse!);
    expect(JSON.parse(stream[0]!.data).message.usage).toMatchObject({ input_tokens: 31, output_tokens: 1 });
    expect(JSON.parse(stream.find((e) => e.event === 'message_delta')!.data).usage).toEqual({ output_tokens: 16 });
  });

  it('the mid-stream error is an `error` event after the text, with no message_stop', () => {
    const stream = events(anthropicWire.scenarios.midStreamError.sse!);
    expect(stream.at(-1)).toMatchObject({ event: 'error' });
    expect(JSON.parse(stream.at(-1)!.data).error.type).toBe('overloaded_error');
    expect(stream.some((e) => e.event === 'message_stop')).toBe(false);
  });
});
