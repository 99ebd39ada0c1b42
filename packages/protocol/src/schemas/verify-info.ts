import { Type, type Static } from '@sinclair/typebox';

export const VerificationInfoSchema = Type.Object({
  available: Type.Boolean({ description: 'Whether the sandbox (bubblewrap) works on this server; when false every verification is `unavailable`.' }),
  reason: Type.Optional(Type.String()),
  languages: Type.Array(Type.Object({ id: Type.String(), supported: Type.Boolean(), reason: Type.Optional(Type.String()) })),
  isolation: Type.Optional(Type.Object({
    limits: Type.Union([Type.Literal('cgroup v1'), Type.Literal('cgroup v2'), Type.Literal('watchdog')], { description: 'What bounds the memory and processes of a whole sandbox here (docs/verification.md, "Which mechanism holds where").' }),
    reason: Type.Optional(Type.String({ description: 'Why no cgroup is used, with `watchdog`.' })),
    seccomp: Type.Boolean({ description: 'Whether the code runs under the seccomp filter (x86-64 and arm64).' }),
  }, { description: 'How the sandbox is enforced on this server; absent when verification is not configured.' })),
  install: Type.Boolean({ description: 'Whether JavaScript/TypeScript dependencies are installed before the checks (CODELOOM_VERIFY_INSTALL).' }),
  limits: Type.Object({
    timeout_s: Type.Integer(), cpu_seconds: Type.Integer(), memory_mb: Type.Integer(), max_processes: Type.Integer(),
    disk_mb: Type.Integer(), output_limit: Type.Integer(), output_tail: Type.Integer(),
    concurrency: Type.Integer({ description: 'Verifications running at once on one instance (CODELOOM_VERIFY_CONCURRENCY).' }),
    per_account: Type.Integer({ description: 'Verifications of one organization running at once on one instance (CODELOOM_VERIFY_PER_ACCOUNT).' }),
    queue: Type.Integer({ description: 'Verifying requests of one organization that may wait on one instance beyond per_account; one more is refused with 429 rate_limited (CODELOOM_VERIFY_QUEUE).' }),
  }),
});
export type VerificationInfo = Static<typeof VerificationInfoSchema>;
