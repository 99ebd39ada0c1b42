/**
 * What every ModelProvider (src/providers/provider.ts) must do, run against
 * each provider by its own small test file (hono's common.case.test.ts
 * pattern):
 *
 *   providerConformance('sandbox', { capabilities: { upstream: false, … }, start: async () => ({ provider, call, close }) });
 *
 * The promises come from provider.ts, docs/models.md ("Failures") and
 * docs/errors.md: generate returns text, usage and a finish reason; a stream
 * is text parts then one finish carrying usage, and adds up to what generate
 * returns; maxTokens ends with `length`, a stop sequence ends the answer
 * before it; an abort rejects with the cancellation error and stops the
 * work (the vendor sees its connection close). Cases that need a remote
 * vendor are in upstream-cases.ts; a case that does not apply to a provider
 * is skipped through its capability flag, never left out.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { StreamPart } from '../../src/providers/provider.js';
import { collect, expectWellFormed, FINISH_REASONS, rejection, textOf, type ProviderSetup, type ProviderSubject } from './provider-harness.js';
import { upstreamCases } from './upstream-cases.js';
import { STOP } from './wire-fixtures.js';

export type { ProviderSetup, ProviderSubject } from './provider-harness.js';

export function providerConformance(name: string, setup: ProviderSetup): void {
  const caps = setup.capabilities;
  if (setup.unavailable) console.log(`skipped: ${name} provider conformance: ${setup.unavailable}`);

  describe.skipIf(setup.unavailable !== undefined)(`${name} provider conformance`, () => {
    let s: ProviderSubject;
    beforeAll(async () => {
      s = await setup.start();
      expect(s.upstream !== undefined, 'the subject has a vendor exactly when capabilities.upstream').toBe(caps.upstream);
    });
    afterAll(() => s?.close());
    beforeEach(() => s?.upstream?.server.reset());
    const vendor = () => s.upstream!;

    it('generate returns text, usage and a finish reason', async () => {
      const out = await s.provider.generate(s.call());
      expect(out.text.length).toBeGreaterThan(0);
      expect(out.usage.promptTokens).toBeGreaterThan(0);
      expect(out.usage.completionTokens).toBeGreaterThan(0);
      expect(FINISH_REASONS).toContain(out.finishReason);
      if (caps.upstream) {
        expect(out).toEqual(vendor().wire.expected.answer);
        const [req] = vendor().server.requests;
        expect(req).toMatchObject({ method: 'POST', path: vendor().wire.path });
        expect(vendor().wire.keyOf(req!.headers)).toBe(vendor().wire.apiKey);
        expect(vendor().wire.sent(req!.body).stream).toBeFalsy();
      }
    });

    it('stream yields text parts, then one finish with usage; the text and usage equal generate\'s', async () => {
      const whole = await s.provider.generate(s.call());
      const parts = await collect(s.provider.stream(s.call()));
      const finish = expectWellFormed(parts);
      expect(parts.length).toBeGreaterThan(2);
      expect(textOf(parts)).toBe(whole.text);
      expect(finish.usage).toEqual(whole.usage);
      expect(finish.finishReason).toBe(whole.finishReason);
      if (caps.upstream) expect(vendor().wire.sent(vendor().server.requests[1]!.body).stream).toBe(true);
    });

    it('maxTokens: the answer ends at the limit with finish reason length', async () => {
      if (caps.upstream) {
        const { server, wire } = vendor();
        server.serve(wire.scenarios.length, { times: 2 });
        expect(await s.provider.generate(s.call({ maxTokens: 5 }))).toEqual(wire.expected.length);
        const parts = await collect(s.provider.stream(s.call({ maxTokens: 5 })));
        expect(textOf(parts)).toBe(wire.expected.length.text);
        expect(expectWellFormed(parts)).toMatchObject({ usage: wire.expected.length.usage, finishReason: 'length' });
        expect(server.requests.map((r) => wire.sent(r.body).maxTokens)).toEqual([5, 5]);
        return;
      }
      const full = await s.provider.generate(s.call());
      expect(full.usage.completionTokens, 'the full answer is longer than the limit').toBeGreaterThan(3);
      const cut = await s.provider.generate(s.call({ maxTokens: 3 }));
      expect(cut.finishReason).toBe('length');
      expect(cut.usage.completionTokens).toBeLessThanOrEqual(3);
      expect(full.text.startsWith(cut.text)).toBe(true);
      expect(cut.text.length).toBeLessThan(full.text.length);
      const parts = await collect(s.provider.stream(s.call({ maxTokens: 3 })));
      expect(textOf(parts)).toBe(cut.text);
      expect(expectWellFormed(parts)).toMatchObject({ usage: cut.usage, finishReason: 'length' });
    });

    it('stop sequences: the answer ends before the first one, with finish reason stop', async () => {
      if (caps.upstream) {
        const { server, wire } = vendor();
        server.serve(wire.scenarios.stopped, { times: 2 });
        expect(await s.provider.generate(s.call({ stop: STOP }))).toEqual(wire.expected.stopped);
        const parts = await collect(s.provider.stream(s.call({ stop: STOP })));
        expect(textOf(parts)).toBe(wire.expected.stopped.text);
        expect(expectWellFormed(parts).finishReason).toBe('stop');
        expect(server.requests.map((r) => wire.sent(r.body).stop)).toEqual([STOP, STOP]);
        return;
      }
      const full = await s.provider.generate(s.call());
      expect(full.text.length, 'an answer long enough to cut').toBeGreaterThan(8);
      const middle = Math.floor(full.text.length / 2);
      const stop = full.text.slice(middle, middle + 3);
      const before = full.text.slice(0, full.text.indexOf(stop));
      const out = await s.provider.generate(s.call({ stop: [stop] }));
      expect(out.text).toBe(before);
      expect(out.finishReason).toBe('stop');
      expect(out.usage.completionTokens).toBeLessThanOrEqual(full.usage.completionTokens);
      const parts = await collect(s.provider.stream(s.call({ stop: [stop] })));
      expect(textOf(parts)).toBe(before);
      expect(expectWellFormed(parts).finishReason).toBe('stop');
    });

    it('an already aborted call is refused with the cancellation error, and nothing is started', async () => {
      const signal = AbortSignal.abort();
      expect((await rejection(s.provider.generate(s.call({ signal })))).code).toBe('cancelled');
      const seen: StreamPart[] = [];
      expect((await rejection(collect(s.provider.stream(s.call({ signal })), seen))).code).toBe('cancelled');
      expect(seen).toEqual([]);
      if (caps.upstream) expect(vendor().server.requests).toHaveLength(0);
    });

    it('aborting mid-stream rejects with the cancellation error at once, after text parts only; the vendor sees the connection close', async () => {
      if (caps.upstream) vendor().server.serve(vendor().wire.scenarios.answer, { delayMs: 100 });
      const controller = new AbortController();
      const seen: StreamPart[] = [];
      let abortedAt = 0;
      const failure = await rejection((async () => {
        for await (const part of s.provider.stream(s.call({ maxTokens: 200, signal: controller.signal }))) {
          seen.push(part);
          if (seen.length === 2) {
            abortedAt = performance.now();
            controller.abort();
          }
        }
      })());
      expect(performance.now() - abortedAt).toBeLessThan(500);
      expect(failure).toMatchObject({ code: 'cancelled', status: 499 });
      expect(seen.length).toBeGreaterThanOrEqual(2);
      expect(seen.every((p) => p.type === 'text'), 'no finish after an abort').toBe(true);
      if (caps.upstream) await vendor().server.waitForAborts(1, 1_000);
    });

    it('a consumer that stops iterating releases the call; the next call is served', async () => {
      if (caps.upstream) vendor().server.serve(vendor().wire.scenarios.answer, { delayMs: 50 });
      for await (const part of s.provider.stream(s.call({ maxTokens: 200 }))) if (part.type === 'text') break;
      if (caps.upstream) await vendor().server.waitForAborts(1, 1_000);
      const next = await s.provider.generate(s.call());
      expect(next).toEqual(await s.provider.generate(s.call()));
    });

    describe.skipIf(!caps.usageOnCancel)('usage of a cancelled call (capability: usageOnCancel)', () => {
      it('the cancellation error carries the tokens used so far', async () => {
        if (caps.upstream) vendor().server.serve(vendor().wire.scenarios.answer, { delayMs: 50 });
        const controller = new AbortController();
        const seen: StreamPart[] = [];
        const failure = await rejection((async () => {
          for await (const part of s.provider.stream(s.call({ maxTokens: 200, signal: controller.signal }))) {
            seen.push(part);
            if (seen.length === 2) controller.abort();
          }
        })());
        expect(failure.code).toBe('cancelled');
        expect(failure.usage?.promptTokens).toBeGreaterThan(0);
        expect(failure.usage?.completionTokens).toBeGreaterThanOrEqual(2);
      });
    });

    describe.skipIf(!caps.upstream)('a remote vendor (capability: upstream)', () => upstreamCases(() => vendor(), () => s));
  });
}
