/**
 * The provider conformance suite on the embedded llama.cpp provider, with a
 * tiny random-weight GGUF model written for the run (tiny-gguf.ts). It runs
 * when the optional node-llama-cpp is installed (`node scripts/install-llama.mjs`)
 * and says it skipped otherwise.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { createLlamaProvider, loadNodeLlamaCpp } from '../../src/providers/llama/llama-provider.js';
import { writeTinyGguf } from '../../src/providers/llama/tiny-gguf.js';
import { providerConformance } from './provider-cases.js';

const installed = (await loadNodeLlamaCpp()) !== undefined;

providerConformance('embedded llama.cpp', {
  capabilities: { upstream: false, usageOnCancel: false },
  unavailable: installed ? undefined : 'node-llama-cpp is not installed (run `node scripts/install-llama.mjs`)',
  async start() {
    const dir = await mkdtemp(join(os.tmpdir(), 'codeloom-llama-conformance-'));
    const modelPath = join(dir, 'tiny.gguf');
    await writeTinyGguf(modelPath, { seed: 1 });
    const provider = await createLlamaProvider({ modelPath });
    return {
      provider,
      // Temperature 0: the same call gives the same tokens, so a stream adds up to generate's text.
      call: (over = {}) => ({
        model: 'local',
        messages: [{ role: 'system', content: 'You write code.' }, { role: 'user', content: 'Write hello world in Python.' }],
        maxTokens: 24,
        temperature: 0,
        ...over,
      }),
      async close() {
        await provider.close?.();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
});
