/**
 * Shared setup of the HTTP provider tests (openai/, anthropic/): the fake vendor is started
 * once per file, reset before each test and closed at the end; `provider()` builds one on
 * it with fast test defaults. `collect` drains a stream, `failure` expects a ProviderError.
 * Test-only code (imports vitest): never import it from the server.
 */
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { ProviderError } from '../errors.js';
import type { ModelProvider, StreamPart } from './provider.js';
import type { HttpProviderOptions } from './http/upstream-http.js';

/** What the setup needs of a fake vendor (test/fakes/fake-vendor.ts). */
type FakeLifecycle = { readonly url: string; reset(): void; close(): Promise<void> };

/**
 * Registers the fake's hooks; `start` starts it (and can keep it for the test file).
 * Returns a factory of providers on the fake: 2 s timeout, 2 retries, 1-50 ms backoff, `apiKey`.
 */
export function setupProviderTests<O extends HttpProviderOptions>(opts: {
  start: () => Promise<FakeLifecycle>;
  create: (o: O) => ModelProvider;
  apiKey: string;
}): (o?: Partial<O>) => ModelProvider {
  let fake: FakeLifecycle;
  beforeAll(async () => {
    fake = await opts.start();
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());
  return (o = {}) =>
    opts.create({ baseUrl: fake.url, apiKey: opts.apiKey, timeoutMs: 2_000, maxRetries: 2, retryBaseDelayMs: 1, retryMaxDelayMs: 50, ...o } as O);
}

/** Every part of a stream, appended to `seen` as they arrive. */
export async function collect(parts: AsyncIterable<StreamPart>, seen: StreamPart[] = []): Promise<StreamPart[]> {
  for await (const part of parts) seen.push(part);
  return seen;
}

/**
 * The error a promise rejects with, of class `kind` (a ProviderError unless told, e.g. `CancelledError` for an
 * aborted call): fails the test if it resolves or rejects with something else.
 */
export async function failure<E = ProviderError>(promise: Promise<unknown>, kind: abstract new (...args: never[]) => E = ProviderError as never): Promise<E> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(kind);
  return err as E;
}
