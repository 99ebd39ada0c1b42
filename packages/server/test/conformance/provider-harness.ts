/**
 * What a provider conformance run is given (one small test file per
 * provider builds it), and the helpers the cases share. Failures are read by
 * their properties (`code`, else `kind`; `status`, else the status the code
 * maps to), never by class, so the cases survive the error classes being
 * merged into one hierarchy.
 */
import { expect } from 'vitest';
import type { FinishReason, ModelCallOptions, ModelProvider, StreamPart, Usage } from '../../src/providers/provider.js';
import type { FixtureServer } from './fixture-server.js';
import type { VendorWire } from './wire-fixtures.js';

export interface ProviderCapabilities {
  /** Talks to a remote vendor over HTTP: retries, status mapping, cut streams, the vendor seeing the connection close. */
  upstream: boolean;
  /** A cancelled call still reports the tokens it used, as `usage` on the cancellation error. */
  usageOnCancel: boolean;
}

export interface ProviderSubject {
  provider: ModelProvider;
  /** A call that answers normally (the sandbox: a whole project; a vendor: its recorded answer); `over` replaces fields. */
  call(over?: Partial<ModelCallOptions>): ModelCallOptions;
  /** The replaying vendor and its recordings; present exactly when `capabilities.upstream`. */
  upstream?: { server: FixtureServer; wire: VendorWire };
  close(): Promise<void>;
}

export interface ProviderSetup {
  capabilities: ProviderCapabilities;
  /** Why the provider cannot run here (an optional package missing): printed, and every case skipped. */
  unavailable?: string | undefined;
  start(): Promise<ProviderSubject>;
}

export const FINISH_REASONS: FinishReason[] = ['stop', 'length', 'tool-calls', 'content-filter', 'error', 'other'];

/** HTTP status of each failure code, as docs/errors.md and docs/models.md give them. */
const STATUS_OF: Record<string, number> = { upstream_error: 502, service_unavailable: 503, upstream_timeout: 504, cancelled: 499 };

export interface Failure {
  code: string;
  status: number | undefined;
  retryable: unknown;
  detail: string;
  upstreamStatus: unknown;
  usage?: Usage;
  /** The provider's own code a refusal passes on (`upstream_rejected`). */
  upstreamCode?: string | undefined;
  /** Headers of Codeloom's answer (Retry-After, x-should-retry). */
  headers?: Record<string, string> | undefined;
}

export function failureOf(err: unknown): Failure {
  const e = (err ?? {}) as Record<string, unknown>;
  const code = String(typeof e.code === 'string' ? e.code : e.kind);
  const status = typeof e.status === 'number' ? e.status : STATUS_OF[code];
  const extra = (e.extra ?? {}) as { upstreamCode?: string; headers?: Record<string, string> };
  return { code, status, retryable: e.retryable, detail: String(e.detail ?? e.message), upstreamStatus: e.upstreamStatus, usage: e.usage as Usage | undefined, upstreamCode: extra.upstreamCode, headers: extra.headers };
}

/** The failure a promise rejects with; fails the case when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<Failure> {
  const outcome = await promise.then((value) => ({ value }), (error: unknown) => ({ error }));
  if (!('error' in outcome)) expect.fail(`expected a failure, got ${JSON.stringify(outcome.value).slice(0, 200)}`);
  return failureOf(outcome.error);
}

/** Every part of a stream, appended to `seen` as they arrive (so a failing stream still shows what came first). */
export async function collect(parts: AsyncIterable<StreamPart>, seen: StreamPart[] = []): Promise<StreamPart[]> {
  for await (const part of parts) seen.push(part);
  return seen;
}

export const textOf = (parts: StreamPart[]) => parts.map((p) => (p.type === 'text' ? p.text : '')).join('');

/** Text parts (each non-empty), then exactly one finish, last; returns the finish. */
export function expectWellFormed(parts: StreamPart[]): Extract<StreamPart, { type: 'finish' }> {
  const last = parts.at(-1);
  expect(last?.type, 'the last part is the finish').toBe('finish');
  const body = parts.slice(0, -1);
  expect(body.every((p) => p.type === 'text' && p.text.length > 0), 'every part before the finish is non-empty text').toBe(true);
  return last as Extract<StreamPart, { type: 'finish' }>;
}
