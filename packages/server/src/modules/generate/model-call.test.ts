import { describe, expect, it } from 'vitest';
import { MemoryLimitStore } from '../../limits/memory-limit-store.js';
import { TokenSpend, type SpendSubject } from '../../limits/token-spend.js';
import type { RegisteredModel } from '../../providers/model-registry.js';
import { createSandboxProvider } from '../../providers/sandbox/sandbox-provider.js';
import { buildGenerationMessages } from './generation-prompt.js';
import { CancelledError } from '../../errors.js';
import { callModel, estimatePromptTokens, tokensToReserve, type ModelCall } from './model-call.js';

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

  it('without max_tokens, a model without foresight reserves the prompt estimate plus its output cap', () => {
    const blind: RegisteredModel = { ...sandbox, provider: { ...sandbox.provider, plannedUsage: undefined }, maxOutputTokens: 1_000 };
    const c = call(subject(), { model: blind });
    expect(tokensToReserve(c)).toBe(estimatePromptTokens(c.messages) + 1_000);
    expect(tokensToReserve({ ...c, maxTokens: 50 })).toBe(estimatePromptTokens(c.messages) + 50);
  });

  it('the prompt estimate is not below what the sandbox counts', async () => {
    for (const prompt of ['todo', 'REST API for todos with auth, a database and tests', '{}();'.repeat(200), 'é'.repeat(300)]) {
      const messages = buildGenerationMessages(prompt, 'python', {});
      const out = await sandbox.provider.generate({ model: 'sandbox', messages, maxTokens: 1 });
      expect(estimatePromptTokens(messages), prompt.slice(0, 20)).toBeGreaterThanOrEqual(out.usage.promptTokens);
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
    expect(settled).toBe(estimatePromptTokens(c.messages) + pieces);
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
