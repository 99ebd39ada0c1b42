import type { GeneratedFile, VerificationAttempt } from '@codeloom/protocol';
import type { Config } from '../../config/load-config.js';
import { CancelledError } from '../../errors.js';
import { needsInstall, planInstall, runWithInstall } from './install-phase.js';
import { countTests, recipeFor, unsupportedReason } from './recipes.js';
import { SandboxRunner, type CheckRun, type CollectedFiles, type SandboxFile, type SandboxLimits, type SandboxStatus } from './sandbox-runner.js';
import { detectToolchains, type Toolchains } from './toolchains.js';
import { VerifyScheduler, type VerifyScheduling, type VerifyTicket } from './verify-scheduler.js';
import type { Context } from '@opentelemetry/api';

export type { VerifyTicket } from './verify-scheduler.js';

/** A verification event as streamed (SSE / WebSocket frames `verify_started`, `verify_output`, `verify_completed`). */
export type VerifyEvent =
  | { event: 'verify_started'; data: { attempt: number; checks: string[] } }
  | { event: 'verify_output'; data: { attempt: number; check: string; text: string } }
  | { event: 'verify_completed'; data: VerificationAttempt };

export interface VerifyOptions {
  attempt: number;
  timeoutMs?: number | undefined;
  /** The caller: when it fires the verification is never started, or its sandbox is killed and its slot freed at once. */
  signal?: AbortSignal | undefined;
  /**
   * The request's place, from `admit` (held across its repairs); without one the verification waits its
   * turn as background work of `org` (workflow runs), under the same caps but taking no queue place.
   */
  ticket?: VerifyTicket | undefined;
  /** The organization it runs for (its per-account cap); without one (internal callers) only the instance cap applies. */
  org?: string | undefined;
  onEvent?: ((event: VerifyEvent) => void | Promise<void>) | undefined;
  /** Tokens of the model call that wrote these files (kept with the attempt). */
  tokensUsed?: number;
  /** With tracing on: the parent of the attempt's span (the request's); observability/observe.ts opens it. */
  trace?: Context | undefined;
}

/** Output streamed to a client per attempt; the result keeps each check's tail either way. */
const STREAMED_OUTPUT = 64 * 1024;

/** What an attempt says when its recipe has tests but none ran (a runner that found no test reports 0 and exits 0). */
export const NO_TESTS_REASON = 'no test ran: the test command found no tests, so nothing was tested';

/**
 * Runs a language's checks over generated files in the sandbox: CODELOOM_VERIFY_CONCURRENCY at a time per
 * instance, CODELOOM_VERIFY_PER_ACCOUNT of one organization, CODELOOM_VERIFY_QUEUE more waiting
 * (verify-scheduler.ts in memory; redis-verify-scheduler.ts across the instances sharing REDIS_URL).
 */
export class VerificationService {
  private ready: Promise<{ runner: SandboxRunner; tools: Toolchains }> | undefined;
  /** Who runs next, and whether a verifying request is admitted at all. */
  readonly scheduler: VerifyScheduling;

  /** Without a scheduler, this instance's own in memory (see `schedulerLimits` for one of another kind). */
  constructor(private readonly config: Config, scheduler?: VerifyScheduling) {
    this.scheduler = scheduler ?? new VerifyScheduler(schedulerLimits(config));
  }

  /**
   * A verifying request's place in its organization's queue, taken before its model call: 429 `rate_limited`
   * with Retry-After when CODELOOM_VERIFY_PER_ACCOUNT + CODELOOM_VERIFY_QUEUE of its requests are already in
   * progress. Pass it to every `verify` of the request and `release` it when the request ends.
   */
  async admit(org: string): Promise<VerifyTicket> {
    return this.scheduler.admit(org);
  }

  /** Stops the scheduler's timers and connections. */
  close(): Promise<void> {
    return this.scheduler.close();
  }

  /** The settings it runs under. */
  get settings(): Config {
    return this.config;
  }

  /** Why a language cannot be verified here, or undefined. */
  async unsupported(language: string): Promise<string | undefined> {
    return unsupportedReason(language, await this.toolchains());
  }

  /** The toolchains looked up and the runner made, once (on first use). */
  private sandbox(): Promise<{ runner: SandboxRunner; tools: Toolchains }> {
    this.ready ??= (async () => {
      const c = this.config;
      const tools = await detectToolchains({ nodeModules: c.verifyNodeModules, extraPaths: c.verifyToolPaths ?? [] });
      const limits: SandboxLimits = {
        timeoutMs: c.verifyTimeout * 1000, cpuSeconds: c.verifyCpuSeconds, memoryMb: c.verifyMemoryMb, maxProcesses: c.verifyMaxProcesses,
        outputLimit: c.verifyOutputLimit, outputTail: c.verifyOutputTail, diskMb: c.verifyDiskMb,
      };
      return { runner: new SandboxRunner(c.verifyBwrap, tools, limits, { cgroup: c.verifyCgroup }), tools };
    })();
    return this.ready;
  }

  /** Whether the sandbox works on this machine (self-test, run once). */
  async status(): Promise<SandboxStatus> {
    return (await this.sandbox()).runner.selfTest();
  }

  /** How the sandbox is enforced here: what bounds memory and processes, and whether the seccomp filter applies. */
  async enforcement(): Promise<SandboxRunner['enforcement']> {
    return (await this.sandbox()).runner.enforcement;
  }

  /** The toolchains on this machine. */
  async toolchains(): Promise<Toolchains> {
    return (await this.sandbox()).tools;
  }

  /**
   * One shell command over files in a fresh sandbox (the engineer's `run` tool): the same two layers, limits
   * and no network as a verification, waiting its turn as background work of `org`; the work directory's files
   * come back after it (`collect`). `unavailable` with the reason when the sandbox cannot run here.
   */
  async runCommand(org: string, files: SandboxFile[], command: string, options: { signal?: AbortSignal | undefined; timeoutMs?: number | undefined; collect: { maxFiles: number; maxFileBytes: number; maxBytes: number } }): Promise<{ unavailable: string } | { check: CheckRun; collected: CollectedFiles | undefined }> {
    const { runner } = await this.sandbox();
    const status = await runner.selfTest();
    if (!status.available) return { unavailable: status.reason };
    const ticket = this.scheduler.background(org);
    try {
      await ticket.acquire(options.signal);
      if (options.signal?.aborted) throw new CancelledError();
      const signal = ticket.revoked && options.signal ? AbortSignal.any([options.signal, ticket.revoked]) : ticket.revoked ?? options.signal;
      const limits = { ...runner.limits, timeoutMs: Math.min(runner.limits.timeoutMs, options.timeoutMs ?? Infinity) };
      const run = await runner.run(files, [{ name: 'run', argv: [command], shell: true }], { signal, limits, collect: options.collect });
      if (options.signal?.aborted) throw new CancelledError();
      return { check: run.checks[0]!, collected: run.collected };
    } finally {
      ticket.release();
    }
  }

  async verify(language: string, files: GeneratedFile[], options: VerifyOptions): Promise<VerificationAttempt> {
    const started = Date.now();
    const { runner, tools } = await this.sandbox();
    const base = { attempt: options.attempt, tokens_used: options.tokensUsed ?? 0 };
    const done = async (attempt: VerificationAttempt) => { await options.onEvent?.({ event: 'verify_completed', data: attempt }); return attempt; };
    const status = await runner.selfTest();
    if (!status.available) return done({ ...base, status: 'unavailable', reason: status.reason, checks: [], tests: { passed: 0, failed: 0 }, duration_ms: 0 });
    const recipe = recipeFor(language, files, tools);
    if ('unsupported' in recipe) return done({ ...base, status: 'unsupported', reason: recipe.unsupported, checks: [], tests: { passed: 0, failed: 0 }, duration_ms: 0 });

    const ticket = options.ticket ?? this.scheduler.background(options.org);
    let acquired = false;
    try {
      // Waits its turn; a caller gone meanwhile never starts (CancelledError); no turn to be had (Redis unreachable) is the request's 503.
      await ticket.acquire(options.signal);
      acquired = true;
      // The sandbox stops when the caller leaves, or when the scheduler takes the slot back (it could not keep it in Redis).
      const signal = ticket.revoked && options.signal ? AbortSignal.any([options.signal, ticket.revoked]) : ticket.revoked ?? options.signal;
      const install = this.config.verifyInstall && needsInstall(language, files);
      await options.onEvent?.({ event: 'verify_started', data: { attempt: options.attempt, checks: [...(install ? ['install'] : []), ...recipe.checks.map((c) => c.name)] } });
      let streamed = 0;
      const pending: Array<void | Promise<void>> = [];
      const timeoutMs = Math.min(runner.limits.timeoutMs, options.timeoutMs ?? Infinity);
      const limits = { ...runner.limits, timeoutMs };
      const stream = (check: string, text: string) => {
        if (!options.onEvent || streamed >= STREAMED_OUTPUT) return;
        const piece = text.slice(0, STREAMED_OUTPUT - streamed);
        streamed += piece.length;
        pending.push(options.onEvent({ event: 'verify_output', data: { attempt: options.attempt, check, text: streamed >= STREAMED_OUTPUT ? `${piece}\n[further output is not streamed]` : piece } }));
      };
      // A signal that fired before the runner listens would never reach it: nothing starts for a caller already gone.
      const stillWanted = () => { if (options.signal?.aborted) throw new CancelledError(); };
      stillWanted();
      const onOutput = (offset: number) => (i: number, text: string) => stream(i < offset ? 'install' : recipe.checks[i - offset]!.name, text);
      const skipped = () => recipe.checks.map((c) => ({ name: c.name, command: c.argv.join(' '), exit_code: null, duration_ms: 0, output: '', skipped: true }));
      // With the install phase, `npm install` runs first in the same sandbox, over the manifest alone (install-phase.ts).
      const plan = install ? await planInstall(files, this.config.verifyNpmRegistry) : undefined;
      let installCheck: CheckRun | undefined;
      let run: { checks: CheckRun[] };
      if (plan && 'refused' in plan) {
        stream('install', plan.refused.output);
        installCheck = plan.refused;
        run = { checks: skipped() };
      } else if (plan) {
        try { stillWanted(); } catch (error) { await plan.close(); throw error; }
        const whole = await runWithInstall(runner, plan, files, recipe.checks, { signal, limits, onOutput: onOutput(1) });
        installCheck = whole.checks[0]!;
        run = { checks: whole.checks.slice(1) };
      } else {
        run = await runner.run(files, recipe.checks, { signal, limits, onOutput: onOutput(0) });
      }
      if (ticket.revoked?.aborted && !options.signal?.aborted) throw ticket.revoked.reason;
      // The sandbox is done: the slot goes to the next waiter while the events drain.
      ticket.finish();
      await Promise.all(pending);
      const all = [...(installCheck ? [installCheck] : []), ...run.checks];
      const failed = all.some((c) => !c.skipped && (c.exit_code !== 0 || c.killed));
      const tests = recipe.testChecks.map((i) => countTests(run.checks[i]!, limits.outputTail)).reduce((a, b) => ({ passed: a.passed + b.passed, failed: a.failed + b.failed }), { passed: 0, failed: 0 });
      // Tests were asked for and their runner ran, yet counted none: not a pass (docs/verification.md).
      const testsRan = recipe.testChecks.length > 0 && recipe.testChecks.every((i) => !run.checks[i]!.skipped);
      const noTests = testsRan && tests.passed + tests.failed === 0;
      return await done({
        ...base, status: failed || noTests ? 'failed' : 'passed', ...(noTests ? { reason: NO_TESTS_REASON } : {}),
        checks: all.map(publicCheck), tests, duration_ms: Date.now() - started,
      });
    } catch (error) {
      if (!acquired || options.signal?.aborted || error instanceof CancelledError) throw error;
      // The self-test passed, so the sandbox broke on the way (bwrap could not start, the driver died): `error`.
      const reason = error instanceof Error ? error.message : String(error);
      return done({ ...base, status: 'error', reason, checks: [], tests: { passed: 0, failed: 0 }, duration_ms: Date.now() - started });
    } finally {
      // A request's ticket goes back to idle (a repair may verify again; the request releases it); background work's is done.
      if (options.ticket) ticket.finish();
      else ticket.release();
    }
  }
}

function publicCheck(c: CheckRun) {
  return { name: c.name, command: c.command, exit_code: c.exit_code, duration_ms: c.duration_ms, output: c.output, ...(c.killed ? { killed: c.killed } : {}), ...(c.skipped ? { skipped: true } : {}) };
}

/** The scheduler's caps from the settings. */
export function schedulerLimits(config: Config) {
  return { concurrency: config.verifyConcurrency, perAccount: config.verifyPerAccount, queue: config.verifyQueue, maxRetryAfterS: config.verifyTimeout };
}
