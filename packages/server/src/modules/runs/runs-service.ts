import type { ExecuteBody, Run } from '@codeloom/protocol';
import { AppError, notFound } from '../../errors.js';
import { newId, nowIso } from '../../storage/ids.js';
import type { RunsTable } from '../../storage/database.js';
import type { Store } from '../../storage/store.js';
import type { Principal } from '../../identity/principal.js';
import type { AgentsService } from '../agents/agents-service.js';
import type { WorkflowsService } from '../workflows/workflows-service.js';
import type { GenerationService } from '../generate/generation-service.js';
import type { ProjectsService } from '../projects/projects-service.js';
import { paginate, type Page } from '../pagination.js';
import type { RunEngine } from './run-engine.js';
import { endRun, errorEventOf, failRun } from './run-ending.js';
import type { RunEventBus } from './run-events.js';
import type { RunExecutor } from './run-executor.js';
import { NO_RUN_FINISHED, type RunFinished } from './run-finished.js';
import { fromRow, isFinished, newStep, toRow, toRun, type RunSpec, type RunState } from './run-record.js';
import { runLimitsOf } from './run-ceilings.js';
import { checkCeilings } from '../agents/document-checks.js';

const ownerOf = (p: Principal) => ({ userId: p.user.id, environment: p.environment });
const DEFAULT_MAX_ITERATIONS = 2;

export class RunsService {
  /** Runs executing on this instance, by id. */
  private readonly controllers = new Map<string, AbortController>();
  private stopping = false;

  constructor(
    private readonly store: Store,
    private readonly agents: AgentsService,
    private readonly workflows: WorkflowsService,
    private readonly generation: GenerationService,
    private readonly projects: ProjectsService,
    private readonly executor: RunExecutor,
    readonly engine: RunEngine,
    readonly events: RunEventBus,
    /** Told once per run this service ends (a queued run cancelled or never queued, a run interrupted). */
    private readonly onFinished: RunFinished = NO_RUN_FINISHED,
    private readonly onError: (error: unknown, what: string) => void = (error, what) => {
      process.stderr.write(`${what}: ${error instanceof Error ? error.message : String(error)}\n`);
    },
  ) {}

  /** Starts taking runs from the engine and hearing cancel signals for the runs executing here. */
  async start(): Promise<void> {
    this.events.onSignal((runId, reason) => this.controllers.get(runId)?.abort(reason));
    await this.events.ready();
    await this.engine.start((runId) => this.executeQueued(runId), (runId) => this.interruptLost(runId));
  }

  async executeWorkflow(principal: Principal, workflowId: string, body: ExecuteBody): Promise<Run> {
    const wf = await this.workflows.getWorkflow(principal, workflowId);
    const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
    const maxIterations = num(wf.data.config.max_iterations);
    const temperature = num(wf.data.config.temperature);
    const maxTokens = num(wf.data.config.maxTokens);
    const limits = runLimitsOf(wf.data.config, body.config);
    return this.create(principal, body, { workflow_id: wf.id, agent_id: null }, {
      ...(limits ? { limits } : {}),
      agents: wf.data.agents, maxIterations: maxIterations ?? DEFAULT_MAX_ITERATIONS,
      ...(temperature !== undefined ? { temperature } : {}), ...(maxTokens !== undefined ? { maxTokens } : {}),
      ...(wf.data.config.verify === true ? { verify: true } : {}),
      ...engineerSettings(wf.data.config),
    });
  }

  async executeAgent(principal: Principal, agentId: string, body: ExecuteBody): Promise<Run> {
    const agent = await this.agents.getAgent(principal, agentId);
    const { temperature, maxTokens } = agent.data.config;
    const limits = runLimitsOf(agent.data.config, body.config);
    return this.create(principal, body, { workflow_id: null, agent_id: agent.id }, {
      ...(limits ? { limits } : {}),
      agents: [{ type: agent.data.type, model: agent.data.model }], maxIterations: 0,
      ...(temperature !== undefined ? { temperature } : {}), ...(maxTokens !== undefined ? { maxTokens } : {}),
      ...engineerSettings(agent.data.config),
    });
  }

  private async create(principal: Principal, body: ExecuteBody, target: { workflow_id: string | null; agent_id: string | null }, spec: RunSpec): Promise<Run> {
    checkCeilings(body.config, '/config');
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
      result: null, tokens_used: 0, cost_usd: 0, limits: spec.limits ?? null, waiting: null, error: null, created_at: nowIso(), started_at: null, finished_at: null,
      userId: principal.user.id, environment: principal.environment, apiKeyId: principal.apiKeyId ?? null, spec,
    };
    await this.store.runs.insert(toRow(run));
    try {
      await this.schedule(run);
    } catch (error) {
      // Not queued anywhere: the run ends now rather than waiting for a restart to find it.
      this.onError(error, 'run could not be queued');
      const message = 'The run queue is unreachable; try again shortly.';
      failRun(run, 'failed', { code: 'service_unavailable', message });
      if (await this.store.runs.saveIfStatus(toRow(run), ['queued'])) this.onFinished(run);
      throw new AppError('service_unavailable', message);
    }
    return toRun(run);
  }

  private schedule(run: Pick<RunState, 'id' | 'userId' | 'environment'>): Promise<void> {
    return this.engine.enqueue(run.id, `${run.userId}:${run.environment}`);
  }

  /** The engine hands this instance a run: it executes it if it is still `queued` (the executor's first save claims it). */
  private async executeQueued(runId: string): Promise<'declined' | void> {
    if (this.stopping) return 'declined';
    const row = await this.store.runs.getById(runId);
    if (!row || this.controllers.has(runId)) return;
    // The job came round again while its run says `running`: the instance that executed it is gone.
    if (row.status === 'running') return void (await this.interruptLost(runId));
    if (row.status !== 'queued') return;
    const controller = new AbortController();
    this.controllers.set(runId, controller);
    try {
      if (this.stopping) return 'declined';
      await this.executor.execute(fromRow(row), controller.signal);
    } catch (error) {
      this.onError(error, 'run execution failed');
    } finally {
      this.controllers.delete(runId);
    }
  }

  /** A run whose executing instance stopped renewing its claim: it ends `failed`/`interrupted`, and that instance (if it still lives) is told to stop. */
  private async interruptLost(runId: string): Promise<void> {
    if (this.controllers.has(runId)) return;
    const row = await this.store.runs.getById(runId);
    if (!row || row.status !== 'running') return;
    const ended = await this.end(row, 'interrupted', ['running']);
    if (!ended) return;
    await this.events.append(runId, errorEventOf(ended));
    await this.events.signal(runId, 'interrupted');
    await this.engine.releaseSlot(runId, `${row.user_id}:${row.environment}`);
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

  /**
   * Cancels a queued or running run, from any instance: the cancel is written
   * in the database first (guarded, so a run that finished meanwhile is a 409),
   * then the instance executing the run is signalled and aborts its model call.
   */
  async cancel(principal: Principal, id: string): Promise<Run> {
    const row = await this.ownedRow(principal, id);
    if (isFinished(row.status as never)) throw new AppError('conflict', `The run already ${row.status}.`);
    const ended = await this.end(row, 'cancelled');
    if (!ended) {
      const now = await this.ownedRow(principal, id);
      throw new AppError('conflict', `The run already ${now.status}.`);
    }
    this.controllers.get(id)?.abort('cancelled');
    await this.events.append(id, errorEventOf(ended));
    await this.events.signal(id, 'cancelled').catch((e) => this.onError(e, 'cancel signal failed'));
    return toRun(ended);
  }

  /** Ends a run from outside its executor (run-ending.ts endRun): the call whose guarded write took tells onFinished. */
  private async end(row: RunsTable, code: 'cancelled' | 'interrupted', onlyIf?: readonly string[]): Promise<RunState | null> {
    const ended = await endRun(this.store, row, code, onlyIf);
    if (ended) this.onFinished(ended);
    return ended;
  }

  /** The run's row for its owner; another account's run (or none) is a 404. */
  async ownedRow(principal: Principal, id: string): Promise<RunsTable> {
    const row = await this.store.runs.get(ownerOf(principal), id);
    if (!row) throw notFound('run');
    return row;
  }

  /**
   * At start. Queued runs are handed to the engine again (once per run: the
   * engine knows them by id). A run left `running` is ended `interrupted` only
   * when no live instance holds it: in-process there is no other instance;
   * on BullMQ a run whose job is still held is left to its owner (or to the
   * stalled-job check if that owner is dead).
   */
  async recover(): Promise<{ interrupted: number; requeued: number }> {
    let interrupted = 0;
    let requeued = 0;
    for (const row of await this.store.runs.withStatus(['running', 'queued'])) {
      if (row.status === 'queued') {
        await this.schedule(fromRow(row));
        requeued++;
        continue;
      }
      if (this.controllers.has(row.id) || (await this.engine.hasLiveJob(row.id))) continue;
      const ended = await this.end(row, 'interrupted', ['running']);
      if (!ended) continue;
      await this.events.append(row.id, errorEventOf(ended));
      interrupted++;
    }
    return { interrupted, requeued };
  }

  /** Ids of the runs executing on this instance. */
  executingHere(): string[] {
    return [...this.controllers.keys()];
  }

  /**
   * Server stop, first of all: the engine takes no more runs, runs executing
   * here are checkpointed `failed`/`interrupted` (finished steps kept); queued
   * runs stay queued for another instance (or the next start).
   */
  async shutdown(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    const stopped = this.engine.stop();
    for (const c of this.controllers.values()) c.abort('interrupted');
    await Promise.race([stopped, new Promise((r) => setTimeout(r, 10_000).unref())]);
    await this.forceInterrupt();
  }

  /** After shutdown and the HTTP drain: the engine's connections close (runs created during the drain were still queued). */
  async close(): Promise<void> {
    await this.shutdown();
    await this.engine.close();
  }

  /** Drain timed out (or an executor is stuck): every run still executing here is written `failed`/`interrupted` directly. */
  async forceInterrupt(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.executingHere().map(async (id) => {
      this.controllers.get(id)?.abort('interrupted');
      const row = await this.store.runs.getById(id);
      const ended = row && (await this.end(row, 'interrupted', ['running']));
      if (ended) await this.events.append(id, errorEventOf(ended)).catch(() => {});
    }));
  }
}

/** An engineer's `max_steps` and `max_wall_seconds` from an agent's or workflow's config (docs/agents.md "The engineer"). */
function engineerSettings(config: Record<string, unknown>): { maxSteps?: number; maxWallSeconds?: number } {
  const int = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined);
  const maxSteps = int(config.max_steps);
  const maxWallSeconds = int(config.max_wall_seconds);
  return { ...(maxSteps !== undefined ? { maxSteps: Math.min(maxSteps, 200) } : {}), ...(maxWallSeconds !== undefined ? { maxWallSeconds: Math.min(maxWallSeconds, 86_400) } : {}) };
}
