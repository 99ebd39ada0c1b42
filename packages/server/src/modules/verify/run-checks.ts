import type { GeneratedFile, RunStep, VerificationAttempt } from '@codeloom/protocol';
import type { ChatMessage } from '../../providers/provider.js';

/**
 * Verification inside workflows (opt-in per workflow with `config.verify: true`): the tester step verifies
 * the files so far, each reviewer sees a fresh verdict on the files so far, and a failing check turns the
 * reviewer's answer into `changes_requested`. The run's `result.verification` is the last verdict.
 */

/** Whether this step runs the checks: testers after writing their tests, reviewers before answering. */
export const checksBefore = (step: RunStep) => step.agent === 'reviewer';
export const checksAfter = (step: RunStep) => step.agent === 'tester';

/** The files of the steps so far (a later step's file replaces an earlier one at the same path). */
export function filesSoFar(steps: RunStep[], upTo: number): GeneratedFile[] {
  const byPath = new Map<string, GeneratedFile>();
  for (const s of steps.slice(0, upTo + 1)) for (const f of s.files ?? []) byPath.set(f.path, f);
  return [...byPath.values()];
}

/** What the reviewer is told: the real results. */
export function checksMessage(v: VerificationAttempt): ChatMessage {
  const lines = v.checks.filter((c) => !c.skipped).map((c) => {
    const failed = c.exit_code !== 0 || c.killed;
    return `- ${c.name} (\`${c.command}\`): ${failed ? `FAILED, exit ${String(c.exit_code)}${c.killed ? `, ${c.killed}` : ''}` : 'passed'}${failed ? `\n\`\`\`text\n${c.output.slice(-3000).trimEnd()}\n\`\`\`` : ''}`;
  });
  const head = v.status === 'passed' || v.status === 'failed'
    ? `The code was built and its tests run in a sandbox: ${v.status.toUpperCase()} (${v.tests.passed} tests passed, ${v.tests.failed} failed${v.reason ? `; ${v.reason}` : ''}).`
    : `The code could not be verified here (${v.status}${v.reason ? `: ${v.reason}` : ''}).`;
  const rule = v.status === 'failed' ? 'A failing check (or no test run) means the work is not done: answer VERDICT: changes_requested and name what to fix.' : '';
  return { role: 'user', content: [head, ...lines, rule].filter(Boolean).join('\n') };
}

/** A failing check forces changes_requested whatever the model said. */
export function verdictWithChecks(verdict: 'approve' | 'changes_requested', v: VerificationAttempt | undefined): 'approve' | 'changes_requested' {
  return v?.status === 'failed' ? 'changes_requested' : verdict;
}

/** The last verdict of a run's steps, for `result.verification`. */
export function lastVerification(steps: RunStep[]): VerificationAttempt | undefined {
  return [...steps].reverse().find((s) => s.verification)?.verification;
}
