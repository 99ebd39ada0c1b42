import { asksForChanges, isReview, reviewFindings, writeReview } from '@codeloom/protocol';
import type { Conversation } from './conversation.js';
import { coderOutputs, fencedPaths } from './conversation.js';
import type { GenerationSpec } from './project-files.js';
import { isTestFile } from './project-files.js';

/**
 * The sandbox reviewer (a deterministic template model, not AI). Its rule is
 * fixed so a workflow's review loop can be tested:
 *
 * - The task contains `[review:changes]`: every review of existing code
 *   requests changes (the run's max_iterations ends the loop).
 * - The task contains `[review:changes=N]`: changes are requested while the
 *   conversation holds at most N coder outputs, so N rounds, then approval.
 * - Otherwise, or when there is no code to review yet: approve.
 *
 * The answer's first line is `VERDICT: approve` or `VERDICT: changes_requested`,
 * then one `- ` line per finding (@codeloom/protocol's agent-prompt-format).
 */
export const REVIEW_MARKER = /\[review:changes(?:=(\d+))?\]/i;

export function requestsChanges(c: Conversation): boolean {
  const marker = REVIEW_MARKER.exec(c.task);
  const coders = coderOutputs(c).length;
  const rounds = marker?.[1] !== undefined ? Number(marker[1]) : Infinity;
  return marker !== null && coders > 0 && coders <= rounds;
}

/** The findings of the latest review when it asked for changes (the coder then answers with a revision), else undefined. */
export function lastReviewAskedForChanges(c: Conversation): string[] | undefined {
  const review = [...c.outputs].reverse().find((o) => isReview(o.text));
  if (!review || !asksForChanges(review.text)) return undefined;
  return reviewFindings(review.text);
}

export function reviewText(c: Conversation, spec: GenerationSpec): string {
  const code = coderOutputs(c);
  const latest = code.at(-1);
  const files = latest ? fencedPaths(latest.text) : [];
  const tests = files.filter(isTestFile);
  const sources = files.filter((p) => !isTestFile(p) && !/\.(md|json|toml|txt|sql)$|(^|\/)(Makefile|CMakeLists\.txt|go\.mod)$/.test(p));
  const main = sources[0] ?? files[0];
  const changes = requestsChanges(c);
  const findings: string[] = [];
  if (!latest) {
    findings.push('No code to review yet: nothing blocks the next step.');
  } else if (changes) {
    findings.push(tests.length
      ? `${tests[0]}: also cover unknown ids and invalid ${spec.field}s, not only the happy path.`
      : `No tests yet: add tests for creating, reading, updating and removing ${spec.resource.words}, and for invalid input.`);
    if (main) findings.push(`${main}: keep the ${spec.field} check in one place and answer bad input with a message that says what is wrong.`);
    findings.push(`Revision ${code.length} of ${spec.resource.words}: the task asks for another round of review before approval.`);
  } else {
    const shown = files.slice(0, 5).join(', ');
    findings.push(files.length ? `Reviewed ${files.length} file${files.length === 1 ? '' : 's'}: ${shown}${files.length > 5 ? `, and ${files.length - 5} more` : ''}.` : 'Reviewed the latest answer: it names no files.');
    findings.push(tests.length ? `Tests cover the ${spec.entity.words} store${tests.length > 1 ? ' and its interface' : ''} (${tests.join(', ')}).` : 'No tests yet; a tester step (or includeTests) would add them.');
    if (lastReviewAskedForChanges(c)) findings.push('The findings of the previous review are addressed.');
    if (main) findings.push(`${main}: input is checked before it reaches the store.`);
  }
  return writeReview(changes ? 'changes_requested' : 'approve', findings);
}
