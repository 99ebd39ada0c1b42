/**
 * Checks of CONTRACT §12.2 "exact windows" through the real interface: concurrent model calls whose
 * prompts the old estimate undercounted (CJK, emoji), against a fake upstream that reports true token
 * counts (fake-tokenizer.ts). After a burst inside one clock minute, what the account was charged
 * (GET /api/v1/usage) must be exactly the sum of what each call used, and never more than the window's figure.
 */
import { expect } from 'vitest';
import type { FakeVendor, RecordedRequest } from '../fakes/fake-vendor.js';
import { fakePromptTokens } from '../fakes/fake-tokenizer.js';
import { request, type JsonResponse } from './http.js';

const CJK = '東京都の天気予報によると明日は晴れのち曇りで気温は二十度前後になる見込みです数据库服务器配置完成后请重新启动应用程序';
const EMOJI = '🚀🎉🔥✨🌏🍣🎌🧪🛠️📦';

/** A prompt of about 2,300 UTF-8 bytes: 600 CJK characters and 100 emoji, named by `i`. The fake counts about 1,550 tokens; the old estimate said about 550. */
export function cjkPrompt(i: number): string {
  return `#${i} ${CJK.repeat(12).slice(0, 600)} ${[...EMOJI.repeat(10)].slice(0, 100).join('')}`;
}

/** The request the fake received for the call whose last user message is `prompt`. */
export function upstreamRequest(fake: FakeVendor, prompt: string): RecordedRequest {
  const found = fake.requests.filter((r) => r.body?.messages?.at(-1)?.content === prompt);
  expect(found, `one upstream request for ${prompt.slice(0, 12)}`).toHaveLength(1);
  return found[0]!;
}

/** What the fake (counting tokens) reported for a request: its prompt by the fake's tokenizer, one token per chunk sent. */
export function reportedUse(fake: FakeVendor, prompt: string, completion: number): { prompt_tokens: number; completion_tokens: number } {
  return { prompt_tokens: fakePromptTokens(upstreamRequest(fake, prompt).body), completion_tokens: completion };
}

/** The account's charged tokens, as its usage rows have them (every call: succeeded, failed, cancelled). */
export async function chargedTotal(base: string, token: string): Promise<number> {
  const usage = await request(`${base}/api/v1/usage`, { token });
  expect(usage.status, usage.text).toBe(200);
  return usage.body.totals.total_tokens;
}

/**
 * The burst's answers: each admitted call was charged exactly what it used (`expected(i)`), the refused ones
 * nothing (429 `rate_limited`, never reaching the upstream), and the sum is within `limit`.
 */
export async function expectExactBurst(opts: {
  base: string; token: string; limit: number; responses: JsonResponse[];
  used: (i: number, res: JsonResponse) => { prompt_tokens: number; completion_tokens: number };
  minAdmitted: number;
}): Promise<{ admitted: number; charged: number }> {
  let sum = 0;
  let admitted = 0;
  for (const [i, res] of opts.responses.entries()) {
    if (res.status === 200) {
      admitted++;
      const use = opts.used(i, res);
      const usage = res.body.usage;
      expect({ prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens }, `call ${i}`).toEqual(use);
      const tokens = res.body.tokens_used ?? usage.total_tokens;
      expect(tokens).toBe(use.prompt_tokens + use.completion_tokens);
      sum += tokens;
    } else {
      expect(res.status, res.text).toBe(429);
      expect(res.body.code ?? res.body.error?.code).toBe('rate_limited');
    }
  }
  const charged = await chargedTotal(opts.base, opts.token);
  expect(charged).toBe(sum);
  expect(charged).toBeLessThanOrEqual(opts.limit);
  expect(admitted).toBeGreaterThanOrEqual(opts.minAdmitted);
  return { admitted, charged };
}
