import type { GeneratedFile, Verification, VerificationAttempt, VerifyOption } from '@codeloom/protocol';
import { AppError, CancelledError } from '../../errors.js';
import type { ChatMessage } from '../../providers/provider.js';
import type { ModelCallResult } from './model-call.js';
import { parseFencedFiles } from './parse-fenced-files.js';
import { NO_TESTS_REASON, type VerificationService, type VerifyEvent, type VerifyOptions, type VerifyTicket } from '../verify/verification-service.js';

/** Characters of each failing check's output sent back to the model. */
const FEEDBACK_CHARS = 4000;

export interface VerifyRequest {
  verifier: VerificationService | undefined;
  option: VerifyOption;
  language: string;
  /** What the model was first told, and what it answered. */
  messages: ChatMessage[];
  output: string;
  files: GeneratedFile[];
  tokensUsed: number;
  /** One more model call through the one model-call loop (reserve → stream → settle). */
  callModel: (messages: ChatMessage[]) => Promise<ModelCallResult>;
  signal?: AbortSignal | undefined;
  onEvent?: ((event: VerifyEvent) => void | Promise<void>) | undefined;
  /** The request's place in its organization's verification queue (taken before the first model call; every attempt uses it). */
  ticket?: VerifyTicket | undefined;
  /** The organization it verifies for. */
  org: string;
  /** With tracing on: the request's span, the parent of each attempt's span. */
  trace?: VerifyOptions['trace'];
}

export interface VerifyOutcome {
  verification: Verification;
  output: string;
  files: GeneratedFile[];
  /** Tokens of the repair calls (the first call's are the caller's). */
  repairUsage: { promptTokens: number; completionTokens: number; costMicros: number };
}

export const repairsOf = (option: VerifyOption) => (typeof option === 'object' ? option.repair ?? 0 : 0);

/** The message that sends a failed verification back to the model. */
export function repairPrompt(attempt: VerificationAttempt): string {
  const failing = attempt.checks.filter((c) => !c.skipped && (c.exit_code !== 0 || c.killed));
  const parts = failing.map((c) => [
    `### ${c.name} (exit code ${String(c.exit_code)}${c.killed ? `, ${c.killed}` : ''})`, `$ ${c.command}`, '```text', c.output.slice(-FEEDBACK_CHARS).trimEnd(), '```',
  ].join('\n'));
  // A run that found no test may have no failing check to show: the reason says what is missing.
  const noTests = attempt.reason === NO_TESTS_REASON;
  return [
    'Your code was built and its tests were run in an isolated sandbox (no network; only the toolchain and packages already installed).',
    ...(parts.length ? [`These checks failed:\n\n${parts.join('\n\n')}`] : []),
    ...(attempt.reason ? [`The verification failed: ${attempt.reason}.`] : []),
    ...(noTests ? ['Write tests that exercise the code, in files the project\'s test command finds, and make them pass.'] : []),
    'Fix the code so that every check passes. Answer with each file that changes, in full, each in its own fenced code block whose info string is the language followed by the file path, as before. Files you leave out stay as they were.',
  ].join('\n\n');
}

function merge(files: GeneratedFile[], changed: GeneratedFile[]): GeneratedFile[] {
  const byPath = new Map(files.map((f) => [f.path, f]));
  for (const f of changed) byPath.set(f.path, f);
  return [...byPath.values()];
}

/**
 * Verifies the answer; while it fails and repairs are left, sends the failing output back to the model
 * (a model call charged like any other) and verifies the repaired files. Every attempt is kept.
 */
export async function verifyAndRepair(req: VerifyRequest): Promise<VerifyOutcome> {
  const repairs = repairsOf(req.option);
  const timeoutMs = typeof req.option === 'object' && req.option.timeout_s ? req.option.timeout_s * 1000 : undefined;
  const history: VerificationAttempt[] = [];
  let { output, files } = req;
  let tokens = req.tokensUsed;
  const repairUsage = { promptTokens: 0, completionTokens: 0, costMicros: 0 };
  let note: string | undefined;
  for (let attempt = 1; ; attempt++) {
    const result: VerificationAttempt = req.verifier
      ? await req.verifier.verify(req.language, files, { attempt, timeoutMs, signal: req.signal, onEvent: req.onEvent, tokensUsed: tokens, ticket: req.ticket, org: req.org, trace: req.trace })
      : { attempt, status: 'unavailable', reason: 'verification is not configured on this server', checks: [], tests: { passed: 0, failed: 0 }, duration_ms: 0, tokens_used: tokens };
    if (!req.verifier) await req.onEvent?.({ event: 'verify_completed', data: result });
    // The caller left (or cancelled) while the checks ran: the sandbox was killed, and nobody waits for a verdict.
    if (req.signal?.aborted) throw new CancelledError();
    history.push(result);
    if (result.status !== 'failed' || attempt > repairs) break;
    const messages: ChatMessage[] = [...req.messages, { role: 'assistant', content: output }, { role: 'user', content: repairPrompt(result) }];
    let answer: ModelCallResult;
    try {
      answer = await req.callModel(messages);
    } catch (error) {
      // Out of budget mid-repair (or a repair prompt too large to ever fit): the verdict so far stands.
      if (error instanceof AppError && (error.code === 'rate_limited' || error.code === 'request_too_large')) { note = `repair stopped: ${error.message}`; break; }
      throw error;
    }
    repairUsage.promptTokens += answer.usage.promptTokens;
    repairUsage.completionTokens += answer.usage.completionTokens;
    repairUsage.costMicros += answer.costMicros;
    tokens = answer.tokens;
    output = answer.text;
    files = merge(files, parseFencedFiles(answer.text, req.language));
  }
  const last = history.at(-1)!;
  const reason = [last.reason, note].filter(Boolean).join('; ');
  const verification: Verification = {
    status: last.status, ...(reason ? { reason } : {}), checks: last.checks, tests: last.tests, attempts: history.length, history,
  };
  return { verification, output, files, repairUsage };
}
