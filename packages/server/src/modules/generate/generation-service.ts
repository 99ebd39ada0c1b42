import type { GenerateBody, GeneratedFile, GenerationResult, LanguageInfo, Verification, VerificationAttempt } from '@codeloom/protocol';
import { AppError, notFound } from '../../errors.js';
import type { RateLimiter } from '../../limits/rate-limiter.js';
import type { TokenReservation } from '../../limits/token-spend.js';
import type { ModelRegistry, RegisteredModel } from '../../providers/model-registry.js';
import type { ChatMessage } from '../../providers/provider.js';
import { microsToUsd } from '../../config/model-prices.js';
import { newTimeOrderedId, nowIso } from '../../storage/ids.js';
import type { Store } from '../../storage/store.js';
import type { GenerationRecord } from '../../storage/repos/generations-repo.js';
import type { Principal } from '../../identity/principal.js';
import { paginate, type Page } from '../pagination.js';
import { buildGenerationMessages } from './generation-prompt.js';
import { callModel, reserveModelCall, type ModelCall, type ModelCallResult, type UsageMeter } from './model-call.js';
import { pickMainFile } from './main-file.js';
import { parseFencedFiles } from './parse-fenced-files.js';
import type { VerificationService, VerifyEvent, VerifyTicket } from '../verify/verification-service.js';
import { verifyAndRepair } from './verify-and-repair.js';
import type { CallOrigin } from '../../plugins/tracing.js';

export interface LanguageCatalog {
  list(): LanguageInfo[];
  /** Canonical id for an id or alias, case-insensitive. */
  resolve(idOrAlias: string): string | undefined;
  infer(prompt: string): string | undefined;
}

/** Saves files into a project; provided by the projects module. */
export interface ProjectFileSink {
  assertWritable(principal: Principal, projectId: string): Promise<void>;
  saveFiles(principal: Principal, projectId: string, files: Array<{ path: string; content: string }>): Promise<void>;
}

export interface PreparedGeneration {
  model: RegisteredModel;
  language: string;
  messages: ChatMessage[];
  body: GenerateBody;
  /** The model call `run` makes (what was reserved for). */
  call: ModelCall;
  /** The call's tokens, held since prepare; `run` settles them (release them if run is never called). */
  reservation: TokenReservation;
  /**
   * With `verify`: the request's place in its organization's verification queue, held since prepare so a
   * full queue is refused before the model is called; `run` releases it (release it if run is never called).
   */
  ticket?: VerifyTicket;
}

export interface RunOptions {
  signal?: AbortSignal;
  /** Called with each piece of text as it arrives; a returned promise holds back the next piece (backpressure). */
  onToken?: (text: string) => void | Promise<void>;
  /** Extra text for the model (agents use their own system prompt). */
  agentType?: string;
  /** Filled in when the call ends: upstream and total milliseconds (the Server-Timing header). */
  timing?: CallTiming;
  /** Verification frames (`verify_started`, `verify_output`, `verify_completed`) when the request asked to verify. */
  onEvent?: (event: VerifyEvent) => void | Promise<void>;
}

/** Where a generation's time went: waiting on the provider, and in all (the gateway's own share is the rest). */
export interface CallTiming { upstreamMs: number; totalMs: number }

/** `Server-Timing` for a call: the provider's time and the gateway's own. */
export function serverTiming(t: CallTiming): string {
  return `upstream;dur=${t.upstreamMs.toFixed(1)}, gateway;dur=${Math.max(0, t.totalMs - t.upstreamMs).toFixed(1)}`;
}

export class GenerationService {
  private projects: ProjectFileSink | undefined;
  private meter: UsageMeter | undefined;
  private verifier: VerificationService | undefined;

  constructor(
    private readonly store: Store,
    private readonly models: ModelRegistry,
    private readonly limiter: RateLimiter,
    readonly languages: LanguageCatalog,
  ) {}

  attachProjects(sink: ProjectFileSink): void {
    this.projects = sink;
  }

  /** Every model call made through this service is told to the meter once it settles (usage accounting). */
  attachUsage(meter: UsageMeter): void {
    this.meter = meter;
  }

  attachVerifier(verifier: VerificationService): void {
    this.verifier = verifier;
  }

  /** The attached verifier (GET /api/v1/verification). */
  get verification(): VerificationService | undefined {
    return this.verifier;
  }

  /** Validates the request against what is configured: 400s name the valid values. */
  async prepare(principal: Principal, body: GenerateBody, origin?: CallOrigin): Promise<PreparedGeneration> {
    const requested = body.language ? this.languages.resolve(body.language) : (this.languages.infer(body.prompt) ?? 'typescript');
    if (!requested) {
      const valid = this.languages.list().map((l) => l.id);
      throw new AppError('validation_failed', `Unknown language "${body.language}". Valid languages: ${valid.join(', ')}.`, { errors: [{ path: '/language', message: `must be one of: ${valid.join(', ')}` }] });
    }
    const modelId = body.model ?? this.models.default;
    const model = this.models.find(modelId);
    if (!model) {
      throw new AppError('validation_failed', `Unknown model "${modelId}". Available models: ${this.models.ids().join(', ')}.`, { errors: [{ path: '/model', message: `must be one of: ${this.models.ids().join(', ')}` }] });
    }
    // The sandbox environment is always served by the deterministic sandbox model.
    const effective = principal.environment === 'sandbox' ? this.models.find('sandbox')! : model;
    if (body.project_id) {
      if (!this.projects) throw notFound('project');
      await this.projects.assertWritable(principal, body.project_id);
    }
    const messages = buildGenerationMessages(body.prompt, requested, body.context);
    const call: ModelCall = {
      subject: principal, model: effective, messages, maxTokens: body.max_tokens, temperature: body.temperature,
      hints: { language: requested, ...(body.context ? { context: body.context as Record<string, string | number | boolean> } : {}) },
      // The route and request id (and trace parent) the request log and traces name; repairs share them.
      origin,
    };
    // A verifying request takes its verification place first (across instances with Redis): a full queue is a 429 before any token is held or spent.
    const ticket = body.verify && this.verifier ? await this.verifier.admit(principal.org.id) : undefined;
    // Reserved last, so a refused request holds nothing; a 429 here is still a plain HTTP answer on the SSE path.
    let reservation: TokenReservation;
    try {
      reservation = await this.reserveCall(call);
    } catch (error) {
      ticket?.release();
      throw error;
    }
    return { model: effective, language: requested, messages, body, call, reservation, ...(ticket ? { ticket } : {}) };
  }

  /**
   * Runs one model call under the account's token budget (see model-call.ts): reserve, stream with abort,
   * settle. Run steps call this: `generation.callModel({ subject: principal, model, messages, maxTokens,
   * temperature, hints, signal, onText, onSettled })`.
   */
  callModel(call: ModelCall): Promise<ModelCallResult> {
    return callModel(this.limiter.spend, call, this.meter);
  }

  /** Holds a call's tokens ahead of `callModel({ ...call, reservation })` (e.g. before announcing a step); 429 `rate_limited` holds nothing. */
  reserveCall(call: ModelCall): Promise<TokenReservation> {
    return reserveModelCall(this.limiter.spend, call);
  }

  /** Runs the model (always streaming upstream, so a caller that leaves stops the spend), stores and returns the result. */
  async run(principal: Principal, prepared: PreparedGeneration, options: RunOptions = {}): Promise<GenerationResult> {
    const started = performance.now();
    const { call } = prepared;
    try {
      // deferCommit: the call's usage row and this generation's row go out in one group commit; both are awaited below.
      const first = await this.callModel({
        ...call, reservation: prepared.reservation, signal: options.signal, onText: options.onToken, deferCommit: true,
        ...(options.agentType ? { hints: { ...call.hints, agentType: options.agentType } } : {}),
      });
      try {
        return await this.finish(principal, prepared, first, started, options);
      } finally {
        await first.committed;
      }
    } finally {
      prepared.ticket?.release();
    }
  }

  /** Verification (when asked), the stored record and the answer of a call that succeeded. */
  private async finish(principal: Principal, prepared: PreparedGeneration, first: ModelCallResult, started: number, options: RunOptions): Promise<GenerationResult> {
    const { call } = prepared;
    if (options.timing) Object.assign(options.timing, { upstreamMs: first.upstreamMs, totalMs: performance.now() - started });
    let { text: output } = first;
    const usage = { ...first.usage };
    let costMicros = first.costMicros;
    const { finishReason, model: served } = first;
    let files = parseFencedFiles(output, prepared.language);
    const verify = prepared.body.verify;
    let checked: Awaited<ReturnType<typeof verifyAndRepair>> | undefined;
    if (verify) {
      try {
        checked = await verifyAndRepair({
          verifier: this.verifier, option: verify, language: prepared.language, messages: prepared.messages, output, files, tokensUsed: first.tokens,
          // Each repair is one more call through the model-call loop, reserved and settled against the same budget.
          callModel: (messages) => this.callModel({ ...call, messages, signal: options.signal, onText: options.onToken }),
          signal: options.signal, onEvent: options.onEvent, ticket: prepared.ticket, org: principal.org.id, trace: call.origin?.trace,
        });
      } finally {
        // Verification is over: the organization's queue place frees before the record is written.
        prepared.ticket?.release();
      }
    }
    if (checked) {
      ({ output, files } = checked);
      usage.promptTokens += checked.repairUsage.promptTokens;
      usage.completionTokens += checked.repairUsage.completionTokens;
      costMicros += checked.repairUsage.costMicros;
    }
    const record: GenerationRecord = {
      id: newTimeOrderedId('gen'), userId: principal.user.id, environment: principal.environment, projectId: prepared.body.project_id ?? null,
      model: served.id, language: prepared.language, prompt: prepared.body.prompt,
      request: { context: prepared.body.context ?? {}, max_tokens: prepared.body.max_tokens ?? null, temperature: prepared.body.temperature ?? null, ...(checked ? { verification: checked.verification } : {}) },
      output, files, code: pickMainFile(files).content, promptTokens: usage.promptTokens, completionTokens: usage.completionTokens,
      processingMs: Math.round(performance.now() - started), finishReason, createdAt: nowIso(), costMicros,
    };
    if (prepared.body.project_id && this.projects) await this.projects.saveFiles(principal, prepared.body.project_id, files);
    await this.store.generations.insert(record);
    return toResult(record);
  }

  /**
   * One verification of files in the sandbox (workflows' tester and reviewer) for an organization: background
   * work that waits its turn under the per-account cap without taking a request's queue place (the run
   * executor bounds the runs); `unavailable` when no verifier is attached.
   */
  async verifyFiles(org: string, language: string, files: GeneratedFile[], options: { signal?: AbortSignal; attempt?: number } = {}): Promise<VerificationAttempt> {
    if (!this.verifier) return { attempt: 1, status: 'unavailable', reason: 'verification is not configured on this server', checks: [], tests: { passed: 0, failed: 0 }, duration_ms: 0, tokens_used: 0 };
    return this.verifier.verify(language, files, { attempt: options.attempt ?? 1, signal: options.signal, org });
  }

  async get(principal: Principal, id: string): Promise<GenerationResult> {
    const record = await this.store.generations.get(principal.user.id, principal.environment, id);
    if (!record) throw notFound('generation');
    return toResult(record);
  }

  async list(principal: Principal, page: number, limit: number): Promise<Page<GenerationResult>> {
    const { rows, total } = await this.store.generations.list(principal.user.id, principal.environment, page, limit);
    return paginate(rows.map(toResult), page, limit, total);
  }
}

export function toResult(r: GenerationRecord): GenerationResult {
  return {
    id: r.id, code: r.code, language: r.language, model: r.model,
    tokens_used: r.promptTokens + r.completionTokens, processing_time: r.processingMs / 1000,
    files: r.files, output: r.output, usage: { prompt_tokens: r.promptTokens, completion_tokens: r.completionTokens },
    cost_usd: microsToUsd(r.costMicros), created_at: r.createdAt, prompt: r.prompt, project_id: r.projectId, finish_reason: r.finishReason,
    // Kept with the request record (no column of its own).
    ...(r.request.verification ? { verification: r.request.verification as Verification } : {}),
  };
}
