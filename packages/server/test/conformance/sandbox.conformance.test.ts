/** The provider conformance suite on the sandbox model: no vendor, so the upstream cases are skipped by its capabilities. */
import { createSandboxProvider } from '../../src/providers/sandbox/sandbox-provider.js';
import { providerConformance } from './provider-cases.js';

providerConformance('sandbox', {
  capabilities: { upstream: false, usageOnCancel: false },
  async start() {
    const provider = createSandboxProvider();
    return {
      provider,
      call: (over = {}) => ({
        model: 'sandbox',
        messages: [{ role: 'system', content: 'You are Codeloom.' }, { role: 'user', content: 'REST API for todos' }],
        hints: { language: 'typescript', context: { framework: 'fastify' } },
        ...over,
      }),
      close: async () => provider.close?.(),
    };
  },
});
