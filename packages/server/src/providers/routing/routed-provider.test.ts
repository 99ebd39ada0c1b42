import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../errors.js';
import { MemoryLimitStore } from '../../limits/memory-limit-store.js';
import type { ModelCallOptions, ModelProvider, StreamPart } from '../provider.js';
import { RoutedProvider, upstreamsFault, type ModelTarget } from './routed-provider.js';
import { DeploymentHealth } from './router.js';

/** A provider answering `text` (or failing with `fail` before or after its first piece), recording the model it was asked for. */
function fake(name: string, behaviour: { text?: string; fail?: () => Error; failAfterFirst?: boolean; conversation?: ModelProvider['conversation'] } = {}) {
  const asked: string[] = [];
  const provider: ModelProvider = {
    name: 'openai',
    ...(behaviour.conversation ? { conversation: behaviour.conversation } : {}),
    async generate() { throw new Error('unused'); },
    async *stream(o: ModelCallOptions): AsyncIterable<StreamPart> {
      asked.push(o.model);
      if (behaviour.fail && !behaviour.failAfterFirst) throw behaviour.fail();
      yield { type: 'text', text: behaviour.text ?? name };
      if (behaviour.fail) throw behaviour.fail();
      yield { type: 'finish', usage: { promptTokens: 3, completionTokens: 1 }, finishReason: 'stop' };
    },
  };
  return { provider, asked };
}

const target = (id: string, provider: ModelProvider, extra: Partial<ModelTarget> = {}): ModelTarget => ({
  deploymentId: id, provider, upstreamModel: `${id}-up`, price: { input: 1, output: 2, cached_input: 1 }, weight: 1, rpm: null, tpm: null, health: new DeploymentHealth(id), ...extra,
});
const settings = () => ({ strategy: 'weighted' as const, limits: new MemoryLimitStore(), cooldownFailures: 3, cooldownMs: 30_000 });
const call = (extra: Partial<ModelCallOptions> = {}): ModelCallOptions => ({ model: 'm', messages: [{ role: 'user', content: 'hello' }], ...extra });
const run = async (p: RoutedProvider, o: ModelCallOptions) => {
  let text = '';
  for await (const part of p.stream(o)) if (part.type === 'text') text += part.text;
  return text;
};
const down = () => new ProviderError('service_unavailable', 'down', true, 503);

describe('RoutedProvider', () => {
  it('hands a call failing before its first piece to another deployment, names the one that served and its price, and counts the failure', async () => {
    const bad = fake('bad', { fail: down });
    const good = fake('good');
    const p = new RoutedProvider('m', [target('a', bad.provider, { weight: 1000 }), target('b', good.provider, { price: { input: 5, output: 6, cached_input: 5 } })], settings());
    const routes: Array<[string, number]> = [];
    expect(await run(p, call({ onRoute: (id, price) => routes.push([id, price.input]) }))).toBe('good');
    expect(bad.asked).toEqual(['a-up']);
    expect(good.asked).toEqual(['b-up']);
    expect(routes).toEqual([['a', 1], ['b', 5]]);
    expect(p.targets[0]!.health.consecutiveFailures).toBe(1);
    expect(p.targets[1]!.health.latencyMs).toEqual(expect.any(Number));
  });

  it('uses the deployment\'s provider without retries while another deployment could take the call, the retrying one for the last', async () => {
    const retrying = fake('retrying', { fail: down });
    const quick = fake('quick', { fail: down });
    const lastRetrying = fake('last-retrying');
    const lastQuick = fake('last-quick');
    const p = new RoutedProvider('m', [
      target('a', retrying.provider, { quickProvider: quick.provider, weight: 1000 }),
      target('b', lastRetrying.provider, { quickProvider: lastQuick.provider, weight: 1 }),
    ], settings());
    expect(await run(p, call())).toBe('last-retrying');
    expect([quick.asked.length, retrying.asked.length, lastQuick.asked.length, lastRetrying.asked.length]).toEqual([1, 0, 0, 1]);
  });

  it('never hands over after the first piece; an upstream 400 is not the deployment\'s fault and is not handed over', async () => {
    const mid = fake('mid', { fail: down, failAfterFirst: true });
    const other = fake('other');
    const p = new RoutedProvider('m', [target('a', mid.provider, { weight: 1000 }), target('b', other.provider, { weight: 0.0001 })], settings());
    await expect(run(p, call())).rejects.toThrow('down');
    expect(other.asked).toEqual([]);
    const rejecting = fake('r', { fail: () => new ProviderError('upstream_rejected', 'too long', false, 400) });
    const q = new RoutedProvider('m', [target('c', rejecting.provider, { weight: 1000 }), target('d', other.provider, { weight: 0.0001 })], settings());
    await expect(run(q, call())).rejects.toThrow('too long');
    expect(other.asked).toEqual([]);
    expect(q.targets[0]!.health.consecutiveFailures).toBe(0);
    expect(upstreamsFault(new ProviderError('upstream_rate_limited', 'x', true, 429))).toBe(true);
    expect(upstreamsFault(new ProviderError('upstream_timeout', 'x', true))).toBe(true);
    expect(upstreamsFault(new ProviderError('upstream_error', 'bad key', false, 401))).toBe(false);
  });

  it('at its rpm a deployment hands over; all at quota → 429 upstream_rate_limited with Retry-After, no upstream call', async () => {
    const one = fake('one');
    const two = fake('two');
    const p = new RoutedProvider('m', [target('a', one.provider, { rpm: 1, weight: 1000 }), target('b', two.provider, { rpm: 1, weight: 1 })], settings());
    expect(await run(p, call())).toBe('one');
    expect(await run(p, call())).toBe('two');
    const error = await run(p, call()).catch((e) => e as ProviderError);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).kind).toBe('upstream_rate_limited');
    expect(Number((error as ProviderError).upstream.headers?.['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(one.asked.length + two.asked.length).toBe(2);
  });

  it('a tpm too small for the call\'s prompt refuses it with a finite Retry-After (the window\'s reset)', async () => {
    const one = fake('one');
    const p = new RoutedProvider('m', [target('a', one.provider, { tpm: 5 })], settings());
    const error = (await run(p, call({ messages: [{ role: 'user', content: 'x'.repeat(400) }] })).catch((e) => e)) as ProviderError;
    expect(error.kind).toBe('upstream_rate_limited');
    const retryAfter = Number(error.upstream.headers?.['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(one.asked).toEqual([]);
  });

  it('all cooling down → 503 with Retry-After (fallback models may take over)', async () => {
    const bad = fake('bad', { fail: down });
    const p = new RoutedProvider('m', [target('a', bad.provider)], { ...settings(), cooldownFailures: 1 });
    await expect(run(p, call())).rejects.toThrow('down');
    const error = (await run(p, call()).catch((e) => e)) as ProviderError;
    expect(error.kind).toBe('service_unavailable');
    expect(Number(error.upstream.headers?.['retry-after'])).toBeGreaterThan(0);
    expect(bad.asked).toHaveLength(1);
  });

  it('a call with tools goes only to deployments whose provider honours them; the model honours what any does', async () => {
    const plain = fake('plain');
    const tooled = fake('tooled', { conversation: { tools: true, responseFormats: ['json_schema'] } });
    const p = new RoutedProvider('m', [target('a', plain.provider, { weight: 1000 }), target('b', tooled.provider, { weight: 1 })], settings());
    expect(p.conversation).toEqual({ tools: true, responseFormats: ['json_schema'] });
    for (let i = 0; i < 5; i++) expect(await run(p, call({ tools: [{ name: 'f' }] }))).toBe('tooled');
    expect(plain.asked).toEqual([]);
  });

  it('its price is the dearest of its deployments, field by field (the reservation holds at it)', () => {
    const x = fake('x').provider;
    const p = new RoutedProvider('m', [
      target('a', x, { price: { input: 1, output: 20, cached_input: 0.5 } }),
      target('b', x, { price: { input: 3, output: 6, cached_input: 3 } }),
    ], settings());
    expect(p.dearestPrice).toEqual({ input: 3, output: 20, cached_input: 3 });
  });
});
