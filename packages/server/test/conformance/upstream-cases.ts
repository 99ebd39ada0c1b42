/**
 * The provider conformance cases that need a remote vendor (capability
 * `upstream`), replayed from recorded transcripts (wire-fixtures.ts). What
 * docs/models.md promises: transient failures (429, 5xx, 529, resets) are
 * retried before any output, then 502 `upstream_error`, 503
 * `service_unavailable` (overloaded) or 504 `upstream_timeout`; other 4xx are
 * not retried; the key never appears in an error; a stream that breaks after
 * it started ends with an error, never a silent stop; the wire's framing
 * (CRLF, events split across TCP chunks) changes nothing.
 */
import { describe, expect, it } from 'vitest';
import type { StreamPart } from '../../src/providers/provider.js';
import type { FixtureServer, ReplayOptions } from './fixture-server.js';
import { collect, expectWellFormed, rejection, textOf, type ProviderSubject } from './provider-harness.js';
import { until } from './wait.js';
import type { ScenarioName, VendorWire } from './wire-fixtures.js';

/** The subject's providers retry twice: three attempts in all. */
const ATTEMPTS = 3;
/** A Retry-After the provider honours at once (the recordings ask for 20 s, longer than the conformance providers wait). */
const NOW = { headers: { 'retry-after': '0' } };

export function upstreamCases(vendor: () => { server: FixtureServer; wire: VendorWire }, subject: () => ProviderSubject): void {
  const serve = (name: ScenarioName, options?: ReplayOptions) => vendor().server.serve(vendor().wire.scenarios[name], options);
  const provider = () => subject().provider;
  const call = () => subject().call();
  const requests = () => vendor().server.requests;

  describe('failures before any output', () => {
    it('429 then 500 are retried, then the answer is delivered (generate)', async () => {
      serve('rateLimited', NOW);
      serve('serverError');
      expect(await provider().generate(call())).toEqual(vendor().wire.expected.answer);
      expect(requests()).toHaveLength(3);
    });

    it('overloaded then 429 are retried, then the whole stream is delivered', async () => {
      serve('overloaded');
      serve('rateLimited', NOW);
      const parts = await collect(provider().stream(call()));
      expect(textOf(parts)).toBe(vendor().wire.expected.answer.text);
      expect(expectWellFormed(parts).usage).toEqual(vendor().wire.expected.answer.usage);
      expect(requests()).toHaveLength(3);
    });

    const lasting: Array<[ScenarioName, number, (w: VendorWire) => number]> = [
      // A 429 that outlasts the retries stays a 429 (with Retry-After): the caller may wait and try again (CONTRACT §12.3).
      ['rateLimited', 429, () => 429],
      ['serverError', 502, () => 500],
      ['overloaded', 503, (w) => w.overloadedStatus],
    ];
    it.each(lasting)('%s outlasting the retries maps to %i (generate and stream)', async (name, status, upstreamStatus) => {
      const expected = upstreamStatus(vendor().wire);
      for (const run of [() => provider().generate(call()), () => collect(provider().stream(call()))]) {
        vendor().server.reset();
        serve(name, { ...NOW, times: ATTEMPTS });
        const failure = await rejection(run());
        expect(failure).toMatchObject({ status, upstreamStatus: expected });
        expect(failure.detail).toContain(`HTTP ${expected}`);
        expect(requests()).toHaveLength(ATTEMPTS);
      }
    });

    it('a Retry-After longer than the provider may wait fails at once with 429 and that Retry-After', async () => {
      serve('rateLimited', { times: ATTEMPTS });
      const failure = await rejection(provider().generate(call()));
      expect(failure).toMatchObject({ status: 429, code: 'upstream_rate_limited', upstreamStatus: 429 });
      expect(Number(failure.headers?.['retry-after'])).toBeGreaterThan(8);
      expect(requests()).toHaveLength(1);
    });

    it('a 400 is not retried: 400 upstream_rejected passing on what the vendor said, and its code', async () => {
      serve('badRequest', { times: ATTEMPTS });
      const failure = await rejection(collect(provider().stream(call())));
      expect(failure).toMatchObject({ status: 400, code: 'upstream_rejected', upstreamStatus: 400, retryable: false });
      expect(failure.upstreamCode).toBeTruthy();
      expect(failure.detail).toContain(vendor().wire.badRequestSays);
      expect(requests()).toHaveLength(1);
    });

    it('a 401 is not retried: 502, and the key appears nowhere in the error', async () => {
      serve('unauthorized', { times: ATTEMPTS });
      const failure = await rejection(provider().generate(call()));
      expect(failure).toMatchObject({ status: 502, upstreamStatus: 401, retryable: false });
      expect(JSON.stringify(failure)).not.toContain(vendor().wire.apiKey);
      expect(requests()).toHaveLength(1);
    });

    it('a vendor that never answers is a 504 after the timeout, and its connection is closed', async () => {
      serve('answer', { hang: true });
      const failure = await rejection(provider().generate(call()));
      expect(failure.status).toBe(504);
      expect(requests()).toHaveLength(1);
      await vendor().server.waitForAborts(1, 1_000);
    });

    it('a stream cut before any output is retried', async () => {
      serve('answer', { cutAfterEvents: 1 });
      const parts = await collect(provider().stream(call()));
      expect(textOf(parts)).toBe(vendor().wire.expected.answer.text);
      expect(requests()).toHaveLength(2);
    });

    it('aborting a call still waiting for its answer rejects with the cancellation error and closes the connection', async () => {
      serve('answer', { hang: true });
      const controller = new AbortController();
      const pending = rejection(provider().generate({ ...call(), signal: controller.signal }));
      await until(() => requests().length === 1, 'the request to arrive');
      controller.abort();
      expect((await pending).code).toBe('cancelled');
      await vendor().server.waitForAborts(1, 1_000);
    });
  });

  describe('failures after output started', () => {
    it.each([['reset', { end: 'destroy' as const }], ['clean end', {}]])(
      'a stream cut mid-answer (%s) fails after the text that came, is not retried, and sends no finish',
      async (_how, options) => {
        serve('truncated', options);
        const seen: StreamPart[] = [];
        const failure = await rejection(collect(provider().stream(call()), seen));
        expect(failure).toMatchObject({ code: 'upstream_error', status: 502, retryable: false });
        expect(seen.every((p) => p.type === 'text')).toBe(true);
        expect(textOf(seen)).toBe(vendor().wire.truncatedText);
        expect(requests()).toHaveLength(1);
      },
    );

    it('an error event mid-stream fails the stream after its text, with no finish', async () => {
      serve('midStreamError');
      const seen: StreamPart[] = [];
      const failure = await rejection(collect(provider().stream(call()), seen));
      expect(failure).toMatchObject({ status: vendor().wire.midStreamError.status, retryable: false });
      expect(seen.every((p) => p.type === 'text')).toBe(true);
      expect(textOf(seen)).toBe(vendor().wire.midStreamError.text);
      expect(requests()).toHaveLength(1);
    });
  });

  describe('framing on the wire', () => {
    const variants: Array<[string, ScenarioName, ReplayOptions]> = [
      ['CRLF line ends', 'crlf', {}],
      ['every event split across TCP chunks (inside characters)', 'answer', { split: true }],
      ['CRLF with CR and LF in different TCP chunks', 'crlf', { split: true }],
    ];
    it.each(variants)('%s: the same parts as the plain stream', async (_what, name, options) => {
      const plain = await collect(provider().stream(call()));
      serve(name, options);
      expect(await collect(provider().stream(call()))).toEqual(plain);
      expect(requests(), 'read at the first attempt (a retry would be served the plain stream)').toHaveLength(2);
    });
  });
}
