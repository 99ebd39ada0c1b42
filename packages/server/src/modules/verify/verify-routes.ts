import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { VerificationInfoSchema, type VerificationInfo } from '@codeloom/protocol';
import type { VerificationService } from './verification-service.js';
import { errorResponses } from '../../plugins/openapi.js';

/** GET /verification: whether verified generation works here, for which languages, under which limits. */
/** What the route reads of generation, by shape: the attached verifier and the languages the API accepts. */
export interface VerifiableGeneration {
  readonly verification: VerificationService | undefined;
  readonly languages: { list(): ReadonlyArray<{ id: string }> };
}

export const verifyRoutes = ({ generation }: { generation: VerifiableGeneration }): FastifyPluginAsync => async (fastify) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/verification', {
    config: { auth: 'read:code' },
    schema: {
      tags: ['Generation'], security: [{ bearer: [] }], summary: 'Whether generated code can be verified here, and for which languages',
      response: { 200: VerificationInfoSchema, ...errorResponses(401, 403, 429) },
    },
  }, async (): Promise<VerificationInfo> => {
    const verifier = generation.verification;
    const languages = generation.languages.list().map((l) => l.id);
    if (!verifier) return { available: false, reason: 'verification is not configured on this server', languages: languages.map((id) => ({ id, supported: false })), install: false, limits: { timeout_s: 0, cpu_seconds: 0, memory_mb: 0, max_processes: 0, disk_mb: 0, output_limit: 0, output_tail: 0, concurrency: 0, per_account: 0, queue: 0 } };
    const status = await verifier.status();
    const enforced = await verifier.enforcement();
    return {
      available: status.available, ...(status.available ? {} : { reason: status.reason }),
      isolation: { limits: enforced.mechanism, ...(enforced.reason ? { reason: enforced.reason } : {}), seccomp: enforced.seccomp },
      languages: await Promise.all(languages.map(async (id) => { const reason = await verifier.unsupported(id); return { id, supported: !reason && status.available, ...(reason ? { reason } : {}) }; })),
      install: verifier.settings.verifyInstall,
      limits: {
        timeout_s: verifier.settings.verifyTimeout, cpu_seconds: verifier.settings.verifyCpuSeconds, memory_mb: verifier.settings.verifyMemoryMb,
        max_processes: verifier.settings.verifyMaxProcesses, disk_mb: verifier.settings.verifyDiskMb, output_limit: verifier.settings.verifyOutputLimit,
        output_tail: verifier.settings.verifyOutputTail, concurrency: verifier.settings.verifyConcurrency,
        per_account: verifier.settings.verifyPerAccount, queue: verifier.settings.verifyQueue,
      },
    };
  });
};
