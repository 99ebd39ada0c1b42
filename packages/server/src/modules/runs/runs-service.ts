import type { ExecuteBody, Run, StreamEvent } from '@codeloom/protocol';
import { AppError, notFound } from '../../errors.js';
import { newId, nowIso } from '../../storage/ids.js';
import type { Store } from '../../storage/store.js';
import type { Principal } from '../auth/principal.js';
import type { AgentsService } from '../agents/agents-service.js';
import type { GenerationService } from '../generate/generation-service.js';
import type { ProjectsService } from '../projects/projects-service.js';
import { paginate, type Page } from '../pagination.js';
import type { RunEventBus, RunEventListener } from './run-events.js';
import { runErrorStatus, type RunExecutor } from './run-executor.js';
import type { RunQueue } from './run-queue.js';
import { fromRow, isFinished, newStep, toRow, toRun, type RunSpec, type RunState } from './run-record.js';

const ownerOf = (p: Principal) => ({ userId: p.user.id, environment: p.environment });
const DEFAULT_MAX_ITERATIONS = 2;

export class RunsService {
  private readonly controllers = new Map<string, AbortController>();
  /** Runs whose job has left the queue on this instance (their row may still say `queued` for a moment). */
  private readonly started = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly agents: AgentsService,
    private readonly generation: GenerationService,
    private readonly projects: ProjectsService,
    private readonly executor: RunExecutor,
    private readonly queue: RunQueue,
    private readonly events: RunEventBus,
  ) {}

  async executeWorkflow(principal: Principal, workflowId: string, body: ExecuteBody): Promise<Run> {
    const wf = await this.agents.getWorkflow(principal, workflowId);
    const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
    const maxIterations = num(wf.data.config.max_iterations);
    const temperature = num(wf.data.config.temperature);
    const maxTokens = num(wf.data.config.maxTokens);
    return this.create(principal, body, { workflow_id: wf.id, agent_id: null }, {
      agents: wf.data.agents, maxIterations: maxIterations ?? DEFAULT_MAX_ITERATIONS,
      ...(temperature !== undefined ? { temperature } : {}), ...(maxTokens !== undefined ? { maxTokens } : {}),
      ...(wf.data.config.verify === true ? { verify: true } : {}),
    });
  }

  async executeAgent(principal: Principal, agentId: string, body: ExecuteBody): Promise<Run> {
    const agent = await this.agents.getAgent(principal, agentId);
    const { temperature, maxTokens } = agent.data.config;
    return this.create(principal, body, { workflow_id: null, agent_id: agent.id }, {
      agents: [{ type: agent.data.type, model: agent.data.model }], maxIterations: 0,
      ...(temperature !== undefined ? { temperature } : {}), ...(maxTokens !== undefined ? { maxTokens } : {}),
    });
  }

  private async create(principal: Principal, body: ExecuteBody, target: { workflow_id: string | null; agent_id: string | null }, spec: RunSpec): Promise<Run> {
    if (body.project_id) await this.projects.assertWritable(principal, body.project_id);
    if (body.language) {
      const language = this.generation.languages.resolve(body.language);
      if (!language) throw new AppError('validation_failed', `Unknown language "${body.language}".`, { errors: [{ path: '/language', message: `must be one of: ${this.generation.languages.list().map((l) => l.id).join(', ')}` }] });
      spec.language = language;
    } else {
      spec.language = this.generation.languages.infer(body.task) ?? 'typescript';
    }
    // The sandbox is always served by the sandbox model, and the run record says so.
    if (principal.environment === 'sandbox') spec.agents = spec.agents.map((a) => ({ ...a, model: 'sandbox' }));
    const run: RunState = {
      id: newId('run'), status: 'queued', ...target, project_id: body.project_id ?? null, task: body.task,
      requirements: body.requirements ?? {}, steps: spec.agents.map((a, i) => newStep(i, a.type, a.model, 0)),
      result: null, tokens_used: 0, error: null, created_at: nowIso(), started_at: null, finished_at: null,
      userId: principal.user.id, environment: principal.environment, spec,
    };
    await this.store.runs.insert(toRow(run));
    this.schedule(run);
    return toRun(run);
  }

  private schedule(run: RunState): void {
    const controller = new AbortController();
    this.controllers.set(run.id, controller);
    this.queue.enqueue(`${run.userId}:${run.environment}`, async () => {
      try {
        if (controller.signal.aborted) return;
        this.started.add(run.id);
        await this.executor.execute(run, controller.signal);
      } finally {
        this.controllers.delete(run.id);
        this.started.delete(run.id);
      }
    });
  }

  async get(principal: Principal, id: string): Promise<Run> {
    const row = await this.store.runs.get(ownerOf(principal), id);
    if (!row) throw notFound('run');
    return toRun(fromRow(row));
  }

  async list(principal: Principal, page: number, limit: number): Promise<Page<Run>> {
    const { rows, total } = await this.store.runs.list(ownerOf(principal), page, limit);
    return paginate(rows.map((r) => toRun(fromRow(r))), page, limit, total);
  }

  /** Cancels a queued or running run; the model call in progress is aborted. Finished runs answer 409. */
  async cancel(principal: Principal, id: string): Promise<Run> {
    const row = await this.store.runs.get(ownerOf(principal), id);
    if (!row) throw notFound('run');
    const run = fromRow(row);
    if (isFinished(run.status)) throw new AppError('conflict', `The run already ${run.status}.`);
    const controller = this.controllers.get(id);
    // A run that has left the queue is ended by its executor (which records the step it stopped in),
    // even when its row still says `queued`; writing `cancelled` here too would race with it.
    if (controller && (run.status === 'running' || this.started.has(id))) {
      controller.abort('cancelled');
      await this.waitUntilFinished(id);
    } else {
      // Queued here, or executing nowhere this instance knows of: record the cancel, keeping finished steps.
      controller?.abort('cancelled');
      const stoppedAt = run.steps.find((s) => s.status === 'running');
      for (const s of run.steps) {
        if (s.status === 'running') Object.assign(s, { status: 'failed', finished_at: nowIso(), error: { code: 'cancelled', message: 'The run was cancelled.' } });
        else if (s.status === 'pending') s.status = 'skipped';
      }
      const message = run.status === 'queued' ? 'The run was cancelled before it started.' : 'The run was cancelled.';
      Object.assign(run, { status: 'cancelled', finished_at: nowIso(), error: { code: 'cancelled', message, ...(stoppedAt ? { step: stoppedAt.index } : {}) } });
      // Only if it has not finished meanwhile (a run that ended while this request read it is not rewritten).
      if (!(await this.store.runs.saveIfStatus(toRow(run), [row.status]))) {
        const now = await this.get(principal, id);
        if (isFinished(now.status)) throw new AppError('conflict', `The run already ${now.status}.`);
        return now;
      }
      this.events.publish(run.id, { event: 'error', id: run.id, data: { status: runErrorStatus('cancelled'), code: 'cancelled', message: 'The run was cancelled.', run: toRun(run) } });
    }
    return this.get(principal, id);
  }

  private async waitUntilFinished(id: string): Promise<void> {
    for (let i = 0; i < 500 && this.controllers.has(id); i++) await new Promise((r) => setTimeout(r, 10));
  }

  /** Live events of one run for a channel client; another account's run is a 404. A finished run answers with its outcome at once. */
  async subscribe(principal: Principal, runId: string, listener: RunEventListener): Promise<() => void> {
    const row = await this.store.runs.get(ownerOf(principal), runId);
    if (!row) throw notFound('run');
    const unsubscribe = this.events.listen(runId, listener);
    // Read again after listening, so an ending between the two reads is not missed.
    const run = fromRow((await this.store.runs.get(ownerOf(principal), runId))!);
    if (isFinished(run.status)) {
      const event: StreamEvent = run.status === 'succeeded'
        ? { event: 'complete', id: run.id, data: toRun(run) }
        : { event: 'error', id: run.id, data: { status: runErrorStatus(run.error?.code ?? run.status), code: run.error?.code ?? run.status, message: run.error?.message ?? `The run ${run.status}.`, run: toRun(run) } };
      listener(event);
    }
    return unsubscribe;
  }

  /**
   * At start: a run left `running` by a stopped server is marked failed with
   * code `interrupted` (its finished steps kept); queued runs are scheduled again.
   */
  async recover(): Promise<{ interrupted: number; requeued: number }> {
    let interrupted = 0;
    let requeued = 0;
    for (const row of await this.store.runs.withStatus(['running', 'queued'])) {
      const run = fromRow(row);
      if (run.status === 'queued') { this.schedule(run); requeued++; continue; }
      const failedAt = run.steps.find((s) => s.status === 'running');
      for (const s of run.steps) {
        if (s.status === 'running') Object.assign(s, { status: 'failed', finished_at: nowIso(), error: { code: 'interrupted', message: 'The server stopped during this step.' } });
        else if (s.status === 'pending') s.status = 'skipped';
      }
      // The same shape as a run checkpointed on SIGTERM: the error names the step it stopped in.
      Object.assign(run, { status: 'failed', finished_at: nowIso(), error: { code: 'interrupted', message: 'The server stopped while this run was in progress.', ...(failedAt ? { step: failedAt.index } : {}) } });
      await this.store.runs.save(toRow(run));
      interrupted++;
    }
    return { interrupted, requeued };
  }

  /** Server stop: running runs are checkpointed as failed/interrupted now; queued ones stay queued for the next start. */
  async shutdown(): Promise<void> {
    this.queue.stop();
    for (const c of this.controllers.values()) c.abort('interrupted');
    for (let i = 0; i < 1_000 && !this.queue.idle; i++) await new Promise((r) => setTimeout(r, 10));
  }
}
