import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from './common.js';

/** passed: every check succeeded; failed: a check failed (or was stopped by a limit); error: the sandbox broke;
 *  unsupported: no toolchain or recipe for the language here; unavailable: the sandbox (bubblewrap) cannot run here. */
export const VERIFICATION_STATUSES = ['passed', 'failed', 'error', 'unsupported', 'unavailable'] as const;
export type VerificationStatus = (typeof VERIFICATION_STATUSES)[number];

export const VerifyOptionSchema = Type.Union([
  Type.Boolean(),
  Type.Object({
    repair: Type.Optional(Type.Integer({ minimum: 0, maximum: 3, description: 'Times a failed verification is sent back to the model with the failing output (default 0).' })),
    timeout_s: Type.Optional(Type.Integer({ minimum: 1, maximum: 600, description: 'Wall-time limit of each verification in seconds (capped by CODELOOM_VERIFY_TIMEOUT).' })),
  }, { additionalProperties: false }),
], { description: 'Run the generated code\'s checks (build, type check, tests) in an isolated sandbox; `true` or `{repair, timeout_s}`.' });
export type VerifyOption = Static<typeof VerifyOptionSchema>;

export const VerificationCheckSchema = Type.Object({
  name: Type.String(),
  command: Type.String(),
  exit_code: Type.Union([Type.Integer(), Type.Null()], { description: 'null when the check did not run (an earlier one failed).' }),
  duration_ms: Type.Integer(),
  output: Type.String({ description: 'The tail of the check\'s output (bounded by CODELOOM_VERIFY_OUTPUT_TAIL).' }),
  killed: Type.Optional(Type.String({ description: 'The limit that stopped it (time, CPU, memory, processes, output).' })),
  skipped: Type.Optional(Type.Boolean()),
});
export type VerificationCheck = Static<typeof VerificationCheckSchema>;

export const TestCountsSchema = Type.Object({ passed: Type.Integer(), failed: Type.Integer() });

export const VerificationAttemptSchema = Type.Object({
  attempt: Type.Integer({ minimum: 1 }),
  status: StringEnum(VERIFICATION_STATUSES),
  reason: Type.Optional(Type.String()),
  checks: Type.Array(VerificationCheckSchema),
  tests: TestCountsSchema,
  duration_ms: Type.Integer(),
  tokens_used: Type.Integer({ description: 'Model tokens of the call that wrote this attempt\'s code.' }),
});
export type VerificationAttempt = Static<typeof VerificationAttemptSchema>;

export const VerificationSchema = Type.Object({
  status: StringEnum(VERIFICATION_STATUSES),
  reason: Type.Optional(Type.String({ description: 'Why it is unsupported, unavailable or an error.' })),
  checks: Type.Array(VerificationCheckSchema, { description: 'The last attempt\'s checks.' }),
  tests: TestCountsSchema,
  attempts: Type.Integer({ minimum: 1, description: 'Verifications run: 1 plus the repairs.' }),
  history: Type.Array(VerificationAttemptSchema, { description: 'Every attempt, first to last.' }),
});
export type Verification = Static<typeof VerificationSchema>;
