import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelCallOptions, StreamPart } from '../provider.js';
import { ProviderError, CancelledError } from '../../errors.js';
import { createLlamaProvider, defaultThreads, loadNodeLlamaCpp, type LlamaProvider } from './llama-provider.js';
import { buildTinyGguf, TINY_DIMS, writeTinyGguf } from './tiny-gguf.js';
import { TokenText } from './token-text.js';

const llamaInstalled = (await loadNodeLlamaCpp()) !== undefined;
if (!llamaInstalled) {
  console.log('skipped: llama provider suite: node-llama-cpp is not installed (run `node scripts/install-llama.mjs`)');
}

describe('tiny GGUF writer', () => {
  it('writes a GGUF v3 header, a few hundred KB, the same bytes for the same seed', () => {
    const a = buildTinyGguf({ seed: 7 });
    expect(a.subarray(0, 4).toString('ascii')).toBe('GGUF');
    expect(a.readUInt32LE(4)).toBe(3);
    expect(Number(a.readBigUInt64LE(8))).toBe(3 + 9 * TINY_DIMS.blocks); // tensors
    expect(a.length % 32).toBe(0);
    expect(a.length).toBeGreaterThan(100_000);
    expect(a.length).toBeLessThan(1_000_000);
    expect(buildTinyGguf({ seed: 7 }).equals(a)).toBe(true);
    expect(buildTinyGguf({ seed: 8 }).equals(a)).toBe(false);
  });
});

describe('TokenText', () => {
  // Fake byte-level detokenizer: a token is a byte; invalid UTF-8 decodes to U+FFFD like llama.cpp's.
  const detok = (tokens: readonly number[]) => Buffer.from(tokens).toString('utf8');
  const bytes = (s: string) => [...Buffer.from(s, 'utf8')];

  it('holds a split multi-byte character until it is complete', () => {
    const t = new TokenText(detok, []);
    const [b1, b2, b3] = bytes('€');
    expect(t.push(b1!).text).toBe('');
    expect(t.push(b2!).text).toBe('');
    expect(t.push(b3!).text).toBe('€');
  });

  it('stops at a stop text, withholding it and any partial match', () => {
    const t = new TokenText(detok, ['###']);
    const out = bytes('ab#c#').map((b) => t.push(b).text).join('');
    expect(out).toBe('ab#c'); // the last '#' could start '###'
    const pushed = bytes('##x').map((b) => t.push(b));
    expect(pushed.map((p) => p.text).join('')).toBe('');
    expect(pushed[1]!.stop).toBe(true);
    expect(t.flush()).toBe('');
  });

  it('flushes a held partial match when generation ends', () => {
    const t = new TokenText(detok, ['###']);
    expect(bytes('a##').map((b) => t.push(b).text).join('')).toBe('a');
    expect(t.flush()).toBe('##');
  });
});

describe('defaultThreads', () => {
  it('uses the cores actually available less one for the event loop, at least 1', () => {
    const cores = os.availableParallelism();
    expect(defaultThreads()).toBeGreaterThanOrEqual(1);
    expect(defaultThreads()).toBeLessThanOrEqual(Math.max(1, cores - 1));
    expect(defaultThreads(1)).toBe(1);
    expect(defaultThreads(2)).toBe(1);
  });
});

describe.skipIf(!llamaInstalled)('llama provider on a tiny random-weight model', () => {
  let dir: string;
  let modelPath: string;
  let provider: LlamaProvider;
  const call = (over: Partial<ModelCallOptions> = {}): ModelCallOptions => ({
    model: 'local',
    messages: [
      { role: 'system', content: 'You write code.' },
      { role: 'user', content: 'Write hello world in Python.' },
    ],
    maxTokens: 24,
    temperature: 0,
    ...over,
  });
  const collect = async (parts: AsyncIterable<StreamPart>): Promise<StreamPart[]> => {
    const out: StreamPart[] = [];
    for await (const part of parts) out.push(part);
    return out;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(os.tmpdir(), 'codeloom-llama-'));
    modelPath = join(dir, 'tiny.gguf');
    await writeTinyGguf(modelPath, { seed: 1 });
    provider = await createLlamaProvider({ modelPath });
  });

  afterAll(async () => {
    await provider?.close?.();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('writes a model file of a few hundred KB', async () => {
    const { size } = await stat(modelPath);
    expect(size).toBeGreaterThan(100_000);
    expect(size).toBeLessThan(1_000_000);
  });

  it("defaults threads to the available cores, not node-llama-cpp's 4", () => {
    expect(provider.name).toBe('llama');
    expect(provider.threads).toBeLessThanOrEqual(defaultThreads());
    expect(provider.threads).toBeLessThanOrEqual(Math.max(1, os.availableParallelism() - 1));
    if (os.availableParallelism() <= 4) expect(provider.threads).not.toBe(4);
    expect(provider.contextSize).toBe(TINY_DIMS.contextLength);
  });

  it('generates text with real usage and a finish reason', async () => {
    const out = await provider.generate(call());
    expect(out.text.length).toBeGreaterThan(0);
    expect(out.usage.promptTokens).toBeGreaterThan(10);
    expect(out.usage.completionTokens).toBeGreaterThan(0);
    expect(out.usage.completionTokens).toBeLessThanOrEqual(24);
    expect(['stop', 'length']).toContain(out.finishReason);
  });

  it('streams pieces that add up to the same text as generate, then one finish part', async () => {
    const whole = await provider.generate(call());
    const parts = await collect(provider.stream(call()));
    const last = parts.at(-1)!;
    expect(last.type).toBe('finish');
    expect(parts.filter((p) => p.type === 'finish')).toHaveLength(1);
    const texts = parts.flatMap((p) => (p.type === 'text' ? [p.text] : []));
    expect(texts.length).toBeGreaterThan(1);
    expect(texts.join('')).toBe(whole.text);
    if (last.type === 'finish') {
      expect(last.usage).toEqual(whole.usage);
      expect(last.finishReason).toBe(whole.finishReason);
    }
  });

  it('respects maxTokens', async () => {
    for (const maxTokens of [1, 5]) {
      const out = await provider.generate(call({ maxTokens }));
      expect(out.usage.completionTokens).toBeLessThanOrEqual(maxTokens);
      if (out.usage.completionTokens === maxTokens) expect(out.finishReason).toBe('length');
    }
  });

  it('stops promptly with a CancelledError when aborted mid-stream', async () => {
    const controller = new AbortController();
    let abortedAt = 0;
    let pieces = 0;
    const error = await (async () => {
      for await (const part of provider.stream(call({ maxTokens: 200, signal: controller.signal }))) {
        if (part.type === 'text' && ++pieces === 2) {
          abortedAt = performance.now();
          controller.abort();
        }
      }
    })().catch((err: unknown) => err);
    expect(error).toBeInstanceOf(CancelledError);
    expect(performance.now() - abortedAt).toBeLessThan(500);
  });

  it('rejects an already aborted call without generating', async () => {
    const err = await provider.generate(call({ signal: AbortSignal.abort() })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CancelledError);
  });

  it('serializes concurrent calls and frees the sequence when a consumer stops early', async () => {
    const alone = await provider.generate(call());
    for await (const part of provider.stream(call())) if (part.type === 'text') break;
    const [a, b] = await Promise.all([provider.generate(call()), provider.generate(call())]);
    expect(a.text).toBe(alone.text);
    expect(b.text).toBe(alone.text);
  });

  it('cancels a call still waiting in the queue without disturbing the one running', async () => {
    const controller = new AbortController();
    const running = provider.generate(call({ maxTokens: 40 }));
    const queued = provider.generate(call({ signal: controller.signal })).catch((e: unknown) => e);
    controller.abort();
    expect(await queued).toBeInstanceOf(CancelledError);
    expect((await running).usage.completionTokens).toBeGreaterThan(0);
  });

  it('refuses calls once closed', async () => {
    const other = await createLlamaProvider({ modelPath, threads: 1 });
    expect(other.threads).toBe(1);
    await other.close?.();
    const err = await other.generate(call()).catch((e: unknown) => e);
    expect((err as ProviderError).kind).toBe('service_unavailable');
  });
});
