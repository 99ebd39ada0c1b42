/**
 * The setup of a provider that talks to a vendor over HTTP: the provider is
 * pointed at a loopback server replaying the vendor's recordings, with a
 * 1 s timeout, two retries and millisecond backoff so failures show fast.
 */
import type { ModelProvider } from '../../src/providers/provider.js';
import { startFixtureServer } from './fixture-server.js';
import type { ProviderSetup } from './provider-harness.js';
import type { VendorWire } from './wire-fixtures.js';

/** The options every HTTP provider takes (src/providers: HttpProviderOptions). */
export interface HttpOptions {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  maxRetries: number;
  retryBaseDelayMs?: number;
  retryMaxDelayMs?: number;
}

const MESSAGES = [
  { role: 'system' as const, content: 'You write Python.' },
  { role: 'user' as const, content: 'A function that greets someone by name.' },
];

export function httpProviderSetup(wire: VendorWire, create: (options: HttpOptions) => ModelProvider): ProviderSetup {
  return {
    capabilities: { upstream: true, usageOnCancel: false },
    async start() {
      const server = await startFixtureServer(wire.scenarios.answer);
      const provider = create({ baseUrl: server.url, apiKey: wire.apiKey, timeoutMs: 1_000, maxRetries: 2, retryBaseDelayMs: 1, retryMaxDelayMs: 50 });
      return {
        provider,
        call: (over = {}) => ({ model: wire.model, messages: MESSAGES, ...over }),
        upstream: { server, wire },
        async close() {
          await provider.close?.();
          await server.close();
        },
      };
    },
  };
}
