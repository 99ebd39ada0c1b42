import type { GeneratedFile, VerificationAttempt } from '@codeloom/protocol';
import type { Config } from '../../config/load-config.js';
import { installDependencies, needsInstall } from './install-phase.js';
import { countTests, recipeFor, unsupportedReason } from './recipes.js';
import { SandboxRunner, type CheckRun, type SandboxLimits, type SandboxStatus } from './sandbox-runner.js';
import { detectToolchains, type Toolchains } from './toolchains.js';

/** A verification event as streamed (SSE / WebSocket frames `verify_started`, `verify_output`, `verify_completed`). */
export type VerifyEvent =
  | { event: 'verify_started'; data: { attempt: number; checks: string[] } }
  | { event: 'verify_output'; data: { attempt: number; check: string; text: string } }
  | { event: 'verify_completed'; data: VerificationAttempt };

export interface VerifyOptions {
  attempt: number;
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
  onEvent?: ((event: VerifyEvent) => void | Promise<void>) | undefined;
  /** Tokens of the model call that wrote these files (kept with the attempt). */
  tokensUsed?: number;
}

/** Output streamed to a client per attempt; the result keeps each check's tail either way. */
const STREAMED_OUTPUT = 64 * 1024;

/** Runs a language's checks over generated files in the sandbox, a few at a time per instance. */
export class VerificationService {
  private ready: Promise<{ runner: SandboxRunner; tools: Toolchains }> | undefined;
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly config: Config) {}

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
      return { runner: new SandboxRunner(c.verifyBwrap, tools, limits), tools };
    })();
    return this.ready;
  }

  /** Whether the sandbox works on this machine (self-test, run once). */
  async status(): Promise<SandboxStatus> {
    return (await this.sandbox()).runner.selfTest();
  }

  /** The toolchains on this machine. */
  async toolchains(): Promise<Toolchains> {
    return (await this.sandbox()).tools;
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

    await this.acquire();
    try {
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
      const installed = install ? await installDependencies(runner, files, this.config.verifyNpmRegistry, limits, { signal: options.signal, onOutput: (_, text) => stream('install', text) }) : undefined;
      try {
        const installFailed = installed && (installed.check.exit_code !== 0 || installed.check.killed);
        const run = installFailed
          ? { checks: recipe.checks.map((c) => ({ name: c.name, command: c.argv.join(' '), exit_code: null, duration_ms: 0, output: '', skipped: true })) }
          : await runner.run(files, recipe.checks, { signal: options.signal, limits, workMounts: installed?.mounts ?? [], onOutput: (i, text) => stream(recipe.checks[i]!.name, text) });
        await Promise.all(pending);
        const all = [...(installed ? [installed.check] : []), ...run.checks];
        const failed = all.some((c) => !c.skipped && (c.exit_code !== 0 || c.killed));
        const tests = recipe.testChecks.map((i) => countTests(run.checks[i]!)).reduce((a, b) => ({ passed: a.passed + b.passed, failed: a.failed + b.failed }), { passed: 0, failed: 0 });
        return await done({ ...base, status: failed ? 'failed' : 'passed', checks: all.map(publicCheck), tests, duration_ms: Date.now() - started });
      } finally {
        installed?.dispose();
      }
    } catch (error) {
      if (options.signal?.aborted) throw error;
      // The self-test passed, so the sandbox broke on the way (bwrap could not start, the driver died): `error`.
      const reason = error instanceof Error ? error.message : String(error);
      return done({ ...base, status: 'error', reason, checks: [], tests: { passed: 0, failed: 0 }, duration_ms: Date.now() - started });
    } finally {
      this.release();
    }
  }

  private async acquire(): Promise<void> {
    if (this.active >= this.config.verifyConcurrency) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
  }

  private release(): void {
    this.active--;
    this.waiting.shift()?.();
  }
}

function publicCheck(c: CheckRun) {
  return { name: c.name, command: c.command, exit_code: c.exit_code, duration_ms: c.duration_ms, output: c.output, ...(c.killed ? { killed: c.killed } : {}), ...(c.skipped ? { skipped: true } : {}) };
}
