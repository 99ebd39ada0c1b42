import { PLANS, type GeneratedFile, type RunStep, type StreamEvent } from '@codeloom/protocol';
import { AppError, CancelledError, retryAfterOf } from '../../errors.js';
import { outputCap, type ModelRegistry } from '../../providers/model-registry.js';
import { microsToUsd } from '../../config/model-prices.js';
import { nowIso } from '../../storage/ids.js';
import type { Store } from '../../storage/store.js';
import type { Principal } from '../../identity/principal.js';
import type { GenerationService } from '../generate/generation-service.js';
import { candidateUses, type ModelCall } from '../generate/model-call.js';
import { parseFencedFiles } from '../generate/parse-fenced-files.js';
import type { TokenReservation } from '../../limits/token-spend.js';
import type { ProjectsService } from '../projects/projects-service.js';
import { FILE_PRODUCERS, buildAgentMessages, parseVerdict } from './agent-prompts.js';
import { errorEventOf, failRun } from './run-ending.js';
import type { RunEventBus } from './run-events.js';
import { NO_RUN_FINISHED, type RunFinished } from './run-finished.js';
import { newStep, runCostUsd, toRow, toRun, type RunState } from './run-record.js';
import { capWithinCeilings, spentOf, stepMicros } from './run-ceilings.js';
import { DEFAULT_MAX_STEPS, engineerLoop } from '../engineer/engineer-loop.js';
import { Workspace } from '../engineer/workspace.js';
import { DEFAULT_ENGINEER_WALL_SECONDS, engineerOutput, engineerSeed, projectFiles, sandboxTools } from './engineer-step.js';
import { writeAgentPrompt } from '@codeloom/protocol';
import type { ToolDefinition } from '../../providers/conversation.js';
import { checksAfter, checksBefore, checksMessage, filesSoFar, lastVerification, verdictWithChecks } from '../verify/run-checks.js';
import type { Context } from '@opentelemetry/api';
import { failSpan, type CallOrigin, type Tracing } from '../../plugins/tracing.js';

/** The stored run is no longer `running` (cancelled or interrupted from another instance): this execution stops without writing. */
class RunLost extends Error {}

/**
 * Carries out one run: its steps in order, each seeing the task, the
 * requirements and the earlier outputs; a reviewer asking for changes sends
 * the work back to the coder at most `maxIterations` times. Every change of
 * state is saved before it is announced, so what a subscriber sees is what a
 * GET returns. Every save is guarded in the database: the first one claims the
 * run (`queued` → `running`), later ones only apply while it is still
 * `running`, so a run cancelled or ended elsewhere is never written back.
 */
export class RunExecutor {
  constructor(
    private readonly store: Store,
    private readonly models: ModelRegistry,
    private readonly generation: GenerationService,
    private readonly projects: ProjectsService,
    private readonly events: RunEventBus,
    /** Told once, by the save that finishes the run (succeeded, failed or cancelled). */
    private readonly onFinished: RunFinished = NO_RUN_FINISHED,
    /** With tracing on: a span per run, a child per step, the step's model call under it. */
    private readonly observe: { tracing?: Tracing | undefined } = {},
  ) {}

  /** Claims and executes a queued run; false when it was not `queued` any more (another instance has it, or it was cancelled). */
  async execute(run: RunState, signal: AbortSignal): Promise<boolean> {
    if (run.status !== 'queued' || signal.aborted) return false;
    const principal = await this.principalFor(run);
    run.status = 'running';
    run.started_at = nowIso();
    if (!(await this.store.runs.saveIfStatus(toRow(run), ['queued']))) return false;
    const traced = this.observe.tracing?.start('run', undefined, { 'codeloom.run_id': run.id, 'codeloom.run.steps': run.steps.length });
    try {
      return await this.executeClaimed(run, principal, signal, traced?.context);
    } finally {
      if (traced) {
        // Read after the run ended (TypeScript narrowed it to `running` above).
        const { status, error } = run as { status: string; error: { code?: string } | null };
        traced.span.setAttribute('codeloom.run.status', status);
        if (status === 'failed') failSpan(traced.span, error?.code ?? 'failed');
        traced.span.end();
      }
    }
  }

  private async executeClaimed(run: RunState, principal: Principal, signal: AbortSignal, trace: Context | undefined): Promise<boolean> {
    await this.events.append(run.id, { event: 'run_started', id: run.id, data: toRun(run) });
    try {
      for (let i = 0; i < run.steps.length; i++) {
        if (signal.aborted) throw new CancelledError();
        const step = run.steps[i]!;
        const stepSpan = this.observe.tracing?.start(`step ${step.agent}`, trace, { 'codeloom.run_id': run.id, 'codeloom.step.index': step.index, 'codeloom.step.agent': step.agent });
        try {
          await this.runStep(run, step, principal, signal, { route: 'run', requestId: run.id, trace: stepSpan?.context });
        } catch (error) {
          if (stepSpan) failSpan(stepSpan.span, error instanceof AppError ? error.code : 'failed');
          throw error;
        } finally {
          stepSpan?.span.end();
        }
      }
      const verification = lastVerification(run.steps);
      const files = runFiles(run.steps);
      const changes = await this.runChanges(run, files);
      run.result = { files, summary: summarize(run), ...(verification ? { verification } : {}), ...(changes ? { changes } : {}) };
      // An engineer run's changes (deletions too) become one project revision; other runs save their files.
      if (run.project_id && changes) {
        if (changes.length) await this.projects.saveRevision(principal, run.project_id, changesWithContent(changes, run.result.files), `Engineer run ${run.id}: ${run.task.split('\n')[0]!.slice(0, 120)}`);
      } else if (run.project_id && run.result.files.length) await this.projects.saveFiles(principal, run.project_id, run.result.files);
      this.finish(run, 'succeeded', null);
      await this.save(run, { event: 'complete', id: run.id, data: toRun(run) });
    } catch (error) {
      if (error instanceof RunLost) return true;
      // Cancelled (by the caller, or the server stopping) however it surfaced: the signal says which.
      const cancelled = error instanceof CancelledError || signal.aborted;
      const reason = cancelled ? signalReason(signal) : undefined;
      const info = cancelled
        ? { code: reason!, message: reason === 'cancelled' ? 'The run was cancelled.' : 'The server stopped while this run was in progress.' }
        : errorInfo(error);
      failRun(run, reason === 'cancelled' ? 'cancelled' : 'failed', info);
      await this.save(run, errorEventOf(run)).catch((e) => {
        if (!(e instanceof RunLost)) throw e;
      });
    }
    return true;
  }

  private async runStep(run: RunState, step: RunStep, principal: Principal, signal: AbortSignal, origin: CallOrigin): Promise<void> {
    const model = run.environment === 'sandbox' ? this.models.find('sandbox')! : this.models.find(step.model);
    if (!model) throw new AppError('validation_failed', `The model "${step.model}" is no longer configured.`);
    if (step.agent === 'engineer') return this.runEngineerStep(run, step, principal, signal, origin, model);
    const messages = buildAgentMessages(step.agent, run.task, run.requirements, run.steps.slice(0, step.index), run.spec.language);
    const call: ModelCall = {
      // Charged to the account, and to the API key the run was started with (its limits as they are now).
      subject: await this.withKeyLimits(principal), model, messages, signal, origin,
      maxTokens: run.spec.maxTokens, temperature: run.spec.temperature,
      hints: { agentType: step.agent, ...(run.spec.language ? { language: run.spec.language } : {}), context: run.requirements as Record<string, string | number | boolean> },
      onText: (text) => { void this.events.append(run.id, { event: 'token', id: run.id, data: text, step: step.index } as StreamEvent).catch(() => { /* a lost token frame; the step's output keeps it */ }); },
      onSettled: (tokens, costMicros) => {
        Object.assign(step, { tokens_used: tokens, cost_usd: microsToUsd(costMicros) });
        run.tokens_used = run.steps.reduce((n, s) => n + s.tokens_used, 0);
        run.cost_usd = runCostUsd(run.steps);
      },
    };
    // Within the run's ceilings before anything is held: the step's output cap is lowered to fit (or the run ends budget_exceeded).
    fitCeilings(run, call);
    // The step's tokens are held before it is announced; the same reservation is settled by the model call.
    const reservation = await this.reserveBudget(run, call, signal);
    if (signal.aborted) {
      await reservation.release();
      throw new CancelledError();
    }
    Object.assign(step, { status: 'running', started_at: nowIso() });
    run.waiting = null;
    try {
      await this.save(run, { event: 'step_started', id: run.id, data: { run_id: run.id, index: step.index, agent: step.agent, model: step.model, iteration: step.iteration } });
    } catch (error) {
      await reservation.release();
      throw error;
    }
    const verify = () => this.generation.verifyFiles(principal.org.id, run.spec.language ?? 'typescript', filesSoFar(run.steps, step.index), { signal });
    if (run.spec.verify && checksBefore(step)) {
      // The checks' report joins the prompt (the reservation was taken on the prompt without it; the settle charges what was used).
      try {
        messages.push(checksMessage(step.verification = await verify()));
        // The prompt grew: the step is fitted to the ceilings again with it (the cap may only go down).
        fitCeilings(run, call);
      } catch (error) {
        await reservation.release();
        throw error;
      }
    }
    // An abort comes out as CancelledError (or, racing it, whatever the call failed with): execute() reads the signal.
    const { text } = await this.generation.callModel({ ...call, reservation });
    step.output = text;
    if (FILE_PRODUCERS.has(step.agent)) step.files = filesOf(step.agent, step.output, run.spec.language ?? 'typescript');
    if (run.spec.verify && checksAfter(step)) step.verification = await verify();
    if (step.agent === 'reviewer') {
      step.verdict = verdictWithChecks(parseVerdict(step.output), step.verification);
      if (step.verdict === 'changes_requested') this.sendBack(run, step);
    }
    Object.assign(step, { status: 'succeeded', finished_at: nowIso() });
    await this.save(run, { event: 'step_completed', id: run.id, data: { run_id: run.id, index: step.index, step } });
  }

  /**
   * An engineer step (docs/agents.md "The engineer"): the loop of model calls and tool calls over a workspace
   * (engineer-loop.ts), each model call fitted to the run's ceilings and reserved like any step's; tool calls
   * and results are announced as `tool_call` / `tool_result` run events. Its files are the whole workspace
   * afterwards, its `changes` the diffs against where it started.
   */
  private async runEngineerStep(run: RunState, step: RunStep, principal: Principal, signal: AbortSignal, origin: CallOrigin, model: NonNullable<ReturnType<ModelRegistry['find']>>): Promise<void> {
    const earlier = run.steps.slice(0, step.index);
    const seed = engineerSeed(await projectFiles(this.store, run.project_id), earlier, collectFiles(earlier));
    const workspace = new Workspace(seed);
    const language = run.spec.language ?? 'typescript';
    const wallMs = (run.spec.maxWallSeconds ?? DEFAULT_ENGINEER_WALL_SECONDS) * 1000;
    const wall = new AbortController();
    const timer = setTimeout(() => wall.abort('run_timeout'), wallMs);
    const stepSignal = AbortSignal.any([signal, wall.signal]);
    const subject = await this.withKeyLimits(principal);
    Object.assign(step, { status: 'running', started_at: nowIso() });
    run.waiting = null;
    await this.save(run, { event: 'step_started', id: run.id, data: { run_id: run.id, index: step.index, agent: step.agent, model: step.model, iteration: step.iteration } });
    const announce = (event: string, data: Record<string, unknown>) => this.events.append(run.id, { event, id: run.id, data: { run_id: run.id, index: step.index, ...data } });
    const turn = async (messages: ReturnType<typeof buildAgentMessages>, tools: ToolDefinition[] | undefined) => {
      const base = { tokens: step.tokens_used, micros: stepMicros(step) };
      const call: ModelCall = {
        subject, model, messages: [...messages], signal: stepSignal, origin,
        maxTokens: run.spec.maxTokens, temperature: run.spec.temperature,
        hints: { agentType: 'engineer', language, context: run.requirements as Record<string, string | number | boolean> },
        ...(tools ? { tools, toolChoice: 'auto' as const } : {}),
        onSettled: (tokens, costMicros) => {
          Object.assign(step, { tokens_used: base.tokens + tokens, cost_usd: microsToUsd(base.micros + costMicros) });
          run.tokens_used = run.steps.reduce((n, s) => n + s.tokens_used, 0);
          run.cost_usd = runCostUsd(run.steps);
        },
      };
      fitCeilings(run, call);
      const reservation = await this.reserveBudget(run, call, stepSignal);
      if (stepSignal.aborted) { await reservation.release(); throw new CancelledError(); }
      const result = await this.generation.callModel({ ...call, reservation });
      return { text: result.text, toolCalls: result.toolCalls };
    };
    try {
      const outcome = await engineerLoop({
        role: buildAgentMessages('engineer', run.task, run.requirements, earlier, run.spec.language)[0]!.content,
        prompt: `${writeAgentPrompt({ task: run.task, language: run.spec.language, requirements: run.requirements, earlier: earlier.filter((s) => s.status === 'succeeded') })}\n\nThe workspace holds ${workspace.size} file${workspace.size === 1 ? '' : 's'}.`,
        native: model.provider.conversation?.tools === true,
        maxSteps: run.spec.maxSteps ?? DEFAULT_MAX_STEPS,
        signal: stepSignal, turn,
        tools: sandboxTools(workspace, this.generation.verification, principal.org.id, language, stepSignal),
        events: {
          toolCall: (e) => announce('tool_call', e),
          toolResult: (e) => announce('tool_result', e),
        },
      });
      step.changes = workspace.changes();
      step.files = workspace.all();
      step.output = engineerOutput(outcome, step.changes);
    } catch (error) {
      if (wall.signal.aborted && !signal.aborted) throw new AppError('run_timeout', `The engineer step passed its wall time of ${wallMs / 1000} s (config.max_wall_seconds).`);
      throw error;
    } finally {
      clearTimeout(timer);
    }
    Object.assign(step, { status: 'succeeded', finished_at: nowIso() });
    await this.save(run, { event: 'step_completed', id: run.id, data: { run_id: run.id, index: step.index, step } });
  }

  /** An engineer run's changes against the project's files (or nothing): undefined for a run without an engineer step. */
  private async runChanges(run: RunState, files: GeneratedFile[]): Promise<RunStep['changes']> {
    if (!run.steps.some((s) => s.agent === 'engineer' && s.status === 'succeeded')) return undefined;
    // Opened on the project's files, then made what the last engineer step left: its changes are the run's.
    const after = new Workspace(await projectFiles(this.store, run.project_id));
    const kept = new Set(files.map((f) => f.path));
    for (const p of after.paths()) if (!kept.has(p)) after.delete(p);
    for (const f of files) after.write(f.path, f.content);
    return after.changes();
  }

  /** Inserts a coder revision and a fresh review right after this review, while revisions remain. */
  private sendBack(run: RunState, review: RunStep): void {
    const revisions = run.steps.filter((s) => (s.agent === 'coder' || s.agent === 'engineer') && s.iteration > 0).length;
    if (revisions >= run.spec.maxIterations) return;
    // The work goes back to whoever did it: the last coder or engineer before the review.
    const coder = [...run.steps.slice(0, review.index)].reverse().find((s) => s.agent === 'coder' || s.agent === 'engineer');
    const iteration = review.iteration + 1;
    run.steps.splice(review.index + 1, 0,
      newStep(0, coder?.agent ?? 'coder', coder?.model ?? review.model, iteration),
      newStep(0, 'reviewer', review.model, iteration));
    run.steps.forEach((s, i) => { s.index = i; });
  }

  /**
   * A step that would go past a tokens-per-minute window waits for the next minute, once; then the run fails.
   * One that would go past a monthly window (an API key's monthly_tokens) fails at once, as does one that can
   * never fit (400 `request_too_large`), or a dollar budget's refusal (429 `budget_exceeded`): the run ends
   * `failed` with that code. While it waits, the run record's `waiting` says so (saved, and announced as
   * `run_waiting`); it is cleared when the step starts.
   */
  private async reserveBudget(run: RunState, call: ModelCall, signal: AbortSignal): Promise<TokenReservation> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.generation.reserveCall(call);
      } catch (error) {
        if (!(error instanceof AppError) || error.code !== 'rate_limited' || attempt > 0) throw error;
        const seconds = retryAfterOf(error) ?? 60;
        if (seconds > 60) throw error;
        run.waiting = { code: 'rate_limited', message: error.message, until: new Date(Date.now() + seconds * 1000).toISOString() };
        await this.save(run, { event: 'run_waiting', id: run.id, data: toRun(run) });
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, seconds * 1000);
          signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
        });
        if (signal.aborted) throw new CancelledError();
      }
    }
  }

  private finish(run: RunState, status: RunState['status'], error: RunState['error']) {
    run.status = status;
    run.error = error;
    run.finished_at = nowIso();
  }

  /** Saves while the run is still `running` here, then announces the change; throws RunLost when it has ended elsewhere. */
  private async save(run: RunState, event: StreamEvent): Promise<void> {
    if (!(await this.store.runs.saveIfStatus(toRow(run), ['running']))) throw new RunLost();
    if (run.status !== 'running') this.onFinished(run);
    await this.events.append(run.id, event);
  }

  /** Who the run's steps act as: its account, and the API key it was started with (if any), whose windows each step is charged to too. */
  private async principalFor(run: RunState): Promise<Principal> {
    const account = await this.store.accounts.findById(run.userId);
    if (!account) throw new AppError('not_found', 'The account of this run no longer exists.');
    const principal: Principal = { type: 'session', user: account.user, org: account.org, scopes: [...PLANS[account.org.plan].permissions], environment: run.environment };
    return run.apiKeyId ? { ...principal, type: 'api_key', apiKeyId: run.apiKeyId } : principal;
  }

  /** The principal with its API key's limits as they are now (a change applies from the next step); unchanged without a key. */
  private async withKeyLimits(principal: Principal): Promise<Principal> {
    if (!principal.apiKeyId) return principal;
    const limits = (await this.store.apiKeys.findById(principal.apiKeyId))?.limits;
    const { keyLimits: _old, ...rest } = principal;
    return limits && (limits.requests_per_minute !== null || limits.tokens_per_minute !== null || limits.monthly_tokens !== null) ? { ...rest, keyLimits: limits } : rest;
  }
}

/**
 * Lowers the step's output cap so that the most it can use (on whichever model serves it) fits in what the run
 * has left under its ceilings; throws 429 `budget_exceeded` when not even a cap of 1 fits. The cap is checked
 * again against what the providers plan for the lowered cap (the sandbox plans exactly), until it holds.
 */
function fitCeilings(run: RunState, call: ModelCall): void {
  const limits = run.spec.limits;
  if (!limits) return;
  const spent = spentOf(run.steps);
  for (let cap = outputCap(call.model, call.maxTokens); ;) {
    const uses = candidateUses(call).map((u) => ({ price: u.model.price, prompt: u.prompt, output: u.output }));
    const fitted = capWithinCeilings(uses, cap, limits, spent);
    if (fitted >= cap) return;
    call.maxTokens = cap = fitted;
  }
}

function signalReason(signal: AbortSignal): 'cancelled' | 'interrupted' {
  return signal.reason === 'interrupted' ? 'interrupted' : 'cancelled';
}

function errorInfo(error: unknown): { code: string; message: string } {
  if (error instanceof AppError) return { code: error.code, message: error.message };
  return { code: 'internal_error', message: 'The run failed because of an error on our side.' };
}

/** A run's files: with an engineer step, the last one's whole workspace with later steps' files over it (what it deleted stays deleted); else collectFiles. */
function runFiles(steps: RunStep[]): GeneratedFile[] {
  const at = steps.map((s) => s.agent === 'engineer' && s.status === 'succeeded').lastIndexOf(true);
  if (at < 0) return collectFiles(steps);
  const byPath = new Map((steps[at]!.files ?? []).map((f) => [f.path, f]));
  for (const f of collectFiles(steps.slice(at + 1))) byPath.set(f.path, f);
  return [...byPath.values()];
}

/** An engineer run's changes with the content each added or modified file has now (for the project revision). */
function changesWithContent(changes: NonNullable<RunStep['changes']>, files: GeneratedFile[]) {
  const byPath = new Map(files.map((f) => [f.path, f.content]));
  return changes.map((c) => (c.status === 'deleted' ? { path: c.path, status: c.status } : { path: c.path, status: c.status, content: byPath.get(c.path) ?? '' }));
}

/** A step's files. Prose without code blocks is a file only for the documenter (its README); an architect's design is files only when fenced. */
function filesOf(agent: RunStep['agent'], output: string, language: string): GeneratedFile[] {
  if (output.includes('```')) return parseFencedFiles(output, language);
  if (agent === 'documenter') return [{ path: 'README.md', content: output }];
  if (agent === 'architect' || !output.trim()) return [];
  return parseFencedFiles(output, language);
}

/** Files of coder, tester and documenter steps (and an architect's design file); a later step's file replaces an earlier one at the same path. */
export function collectFiles(steps: RunStep[]): GeneratedFile[] {
  const byPath = new Map<string, GeneratedFile>();
  for (const s of steps) if (s.status === 'succeeded') for (const f of s.files ?? []) byPath.set(f.path, f);
  return [...byPath.values()];
}

function summarize(run: RunState): string {
  const done = run.steps.filter((s) => s.status === 'succeeded');
  const revisions = done.filter((s) => (s.agent === 'coder' || s.agent === 'engineer') && s.iteration > 0).length;
  const verdict = [...done].reverse().find((s) => s.agent === 'reviewer')?.verdict;
  const files = run.result?.files.length ?? collectFiles(run.steps).length;
  return [
    `${done.length} step${done.length === 1 ? '' : 's'} (${done.map((s) => s.agent).join(' → ')}) produced ${files} file${files === 1 ? '' : 's'}.`,
    ...(revisions ? [`The reviewer sent the work back ${revisions} time${revisions === 1 ? '' : 's'}.`] : []),
    ...(verdict ? [`Final review: ${verdict === 'approve' ? 'approved' : 'changes still requested (revision limit reached)'}.`] : []),
  ].join(' ');
}
