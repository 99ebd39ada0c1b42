import { describe, expect, it } from 'vitest';
import { MemoryLimitStore } from '../../limits/memory-limit-store.js';
import { TokenSpend, type SpendSubject } from '../../limits/token-spend.js';
import type { RegisteredModel } from '../../providers/model-registry.js';
import { createSandboxProvider } from '../../providers/sandbox/sandbox-provider.js';
import { buildGenerationMessages } from './generation-prompt.js';
import { CancelledError } from '../../errors.js';
import type { ModelProvider, ReportedUsage } from '../../providers/provider.js';
import { callModel, promptTokenBound, tokensToReserve, type ModelCall } from './model-call.js';

const sandbox: RegisteredModel = { id: 'sandbox', upstreamId: 'sandbox', provider: createSandboxProvider(), description: 'sandbox', maxOutputTokens: 8192 };
const subject = (): SpendSubject => ({ user: { id: `usr_${Math.random().toString(36).slice(2)}` }, org: { plan: 'free' }, environment: 'production' });
const call = (s: SpendSubject, extra: Partial<ModelCall> = {}): ModelCall => ({
  subject: s, model: sandbox, messages: buildGenerationMessages('REST API for todos', 'typescript', { includeTests: true }),
  hints: { language: 'typescript', context: { includeTests: true } }, ...extra,
});

describe('callModel: reserve, stream, settle', () => {
  it('a sandbox call reserves exactly what it then uses', async () => {
    const spend = new TokenSpend(new MemoryLimitStore());
    const s = subject();
    const planned = tokensToReserve(call(s));
    const result = await callModel(spend, call(s));
    expect(result.tokens).toBe(result.usage.promptTokens + result.usage.completionTokens);
    expect(result.tokens).toBe(planned);
    expect((await spend.left(s))!.remaining).toBe(20_000 - result.tokens);
  });

  it('without max_tokens, a model without foresight reserves the prompt bound plus its output cap', () => {
    const blind: RegisteredModel = { ...sandbox, provider: { ...sandbox.provider, plannedUsage: undefined }, maxOutputTokens: 1_000 };
    const c = call(subject(), { model: blind });
    expect(tokensToReserve(c)).toBe(promptTokenBound(c.messages) + 1_000);
    expect(tokensToReserve({ ...c, maxTokens: 50 })).toBe(promptTokenBound(c.messages) + 50);
  });

  it('the prompt bound is the UTF-8 bytes of every message plus the chat format, whatever the script', () => {
    const text = '東京の天気は晴れ 🌤️ 👨‍👩‍👧 x7#Q!zq';
    const messages = [{ role: 'system' as const, content: 'Be brief.' }, { role: 'user' as const, content: text }];
    expect(promptTokenBound(messages)).toBe(32 + 8 + 9 + 8 + Buffer.byteLength(text));
    expect(promptTokenBound(messages, 'tail')).toBe(promptTokenBound(messages) + 8 + 4);
  });

  it('the prompt bound is not below what the sandbox counts', async () => {
    for (const prompt of ['todo', 'REST API for todos with auth, a database and tests', '{}();'.repeat(200), 'é'.repeat(300), '漢字'.repeat(400), '🚀'.repeat(300)]) {
      const messages = buildGenerationMessages(prompt, 'python', {});
      const out = await sandbox.provider.generate({ model: 'sandbox', messages, maxTokens: 1 });
      expect(promptTokenBound(messages), prompt.slice(0, 20)).toBeGreaterThanOrEqual(out.usage.promptTokens!);
    }
  });

  it('an aborted call is charged what it used, and the rest of its reservation goes back', async () => {
    const spend = new TokenSpend(new MemoryLimitStore());
    const s = subject();
    const abort = new AbortController();
    let pieces = 0;
    let settled = -1;
    const c = call(s, { signal: abort.signal, onText: () => { if (++pieces === 5) abort.abort(); }, onSettled: (t) => { settled = t; } });
    await expect(callModel(spend, c)).rejects.toBeInstanceOf(CancelledError);
    // The sandbox counts the prompt exactly, and a piece is a token.
    const planned = sandbox.provider.plannedUsage!({ model: 'sandbox', messages: c.messages, maxTokens: 8192, hints: c.hints! });
    expect(settled).toBe(planned.promptTokens + pieces);
    expect((await spend.left(s))!.remaining).toBe(20_000 - settled);
  });

  it('a call whose caller already left holds nothing', async () => {
    const spend = new TokenSpend(new MemoryLimitStore());
    const s = subject();
    const abort = new AbortController();
    abort.abort();
    await expect(callModel(spend, call(s, { signal: abort.signal }))).rejects.toBeInstanceOf(CancelledError);
    expect((await spend.left(s))!.remaining).toBe(20_000);
  });
});

/** A provider that streams `pieces` whatever max_tokens says, then finishes with `usage` (as reported: maybe partial, maybe none). */
function scripted(pieces: string[], usage: ReportedUsage, sent: { count: number; closed: boolean }): ModelProvider {
  return {
    name: 'scripted',
    generate: async () => { throw new Error('not used'); },
    async *stream() {
      try {
        for (const text of pieces) {
          sent.count++;
          yield { type: 'text', text };
        }
        yield { type: 'finish', usage, finishReason: 'stop' };
      } finally {
        sent.closed = true;
      }
    },
  };
}

describe('callModel: the output cap and what is charged without a report', () => {
  const upstream = (provider: ModelProvider): RegisteredModel => ({ id: 'up', upstreamId: 'up', provider, description: 'up' });
  const messages = [{ role: 'user' as const, content: '日本語のプロンプト 🎌' }];

  it('an upstream that ignores max_tokens is cut at the cap: finish_reason length, the request ended, charged what was counted', async () => {
    const spend = new TokenSpend(new MemoryLimitStore());
    const s = subject();
    const sent = { count: 0, closed: false };
    const model = upstream(scripted(Array.from({ length: 500 }, (_, i) => `w${i} `), { promptTokens: 20, completionTokens: 500 }, sent));
    const texts: string[] = [];
    const result = await callModel(spend, { subject: s, model, messages, maxTokens: 3, onText: (t) => { texts.push(t); } });
    expect(result.finishReason).toBe('length');
    expect(result.text).toBe('w0 w1 w2 ');
    expect(texts).toEqual(['w0 ', 'w1 ', 'w2 ']);
    // The fourth piece was the sign: nothing after it was read, and the stream was closed.
    expect(sent).toEqual({ count: 4, closed: true });
    expect(result.usage).toEqual({ promptTokens: promptTokenBound(messages), completionTokens: 3 });
    expect(result.tokens).toBe(tokensToReserve({ subject: s, model, messages, maxTokens: 3 }));
    expect((await spend.left(s))!.remaining).toBe(20_000 - result.tokens);
  });

  it('an answer of exactly the cap is not cut, and its report is charged', async () => {
    const spend = new TokenSpend(new MemoryLimitStore());
    const s = subject();
    const sent = { count: 0, closed: false };
    const model = upstream(scripted(['a', 'b', 'c'], { promptTokens: 9, completionTokens: 3 }, sent));
    const result = await callModel(spend, { subject: s, model, messages, maxTokens: 3 });
    expect(result.finishReason).toBe('stop');
    expect(result.usage).toEqual({ promptTokens: 9, completionTokens: 3 });
    expect((await spend.left(s))!.remaining).toBe(20_000 - 12);
  });

  it('an upstream that reports no usage is charged the prompt bound and the pieces received; a partial report keeps what it says', async () => {
    const spend = new TokenSpend(new MemoryLimitStore());
    const s = subject();
    const none = await callModel(spend, { subject: s, model: upstream(scripted(['x', 'y'], {}, { count: 0, closed: false })), messages, maxTokens: 10 });
    expect(none.usage).toEqual({ promptTokens: promptTokenBound(messages), completionTokens: 2 });
    const partial = await callModel(spend, { subject: s, model: upstream(scripted(['x', 'y'], { completionTokens: 5 }, { count: 0, closed: false })), messages, maxTokens: 10 });
    expect(partial.usage).toEqual({ promptTokens: promptTokenBound(messages), completionTokens: 5 });
    expect((await spend.left(s))!.remaining).toBe(20_000 - none.tokens - partial.tokens);
  });

  it('use reported above the reservation is charged in full (carried past the window\'s figure into the next)', async () => {
    const spend = new TokenSpend(new MemoryLimitStore());
    const s = subject();
    let settled = 0;
    const model = upstream(scripted(['one big piece'], { promptTokens: 100, completionTokens: 30_000 }, { count: 0, closed: false }));
    const result = await callModel(spend, { subject: s, model, messages, maxTokens: 10, onSettled: (t) => { settled = t; } });
    expect(result.tokens).toBe(30_100);
    expect(settled).toBe(30_100);
    expect((await spend.left(s))!.remaining).toBe(0);
  });
});
