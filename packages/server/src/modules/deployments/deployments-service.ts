import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { CreateDeploymentBody, Deployment, DeploymentModel, DeploymentTestResult, UpdateDeploymentBody } from '@codeloom/protocol';
import { AppError, notFound } from '../../errors.js';
import type { Config } from '../../config/load-config.js';
import type { ModelPrice } from '../../config/model-prices.js';
import type { SecretCipher } from '../../identity/secret-cipher.js';
import type { LimitStore } from '../../limits/limit-store.js';
import type { Store } from '../../storage/store.js';
import type { DeploymentModelRecord, DeploymentRecord } from '../../storage/repos/deployments-repo.js';
import { newId, nowIso } from '../../storage/ids.js';
import type { ModelRegistry, RegisteredModel } from '../../providers/model-registry.js';
import type { ModelProvider } from '../../providers/provider.js';
import type { EmbeddingProvider } from '../../providers/embeddings.js';
import { createOpenAIProvider } from '../../providers/openai/openai-provider.js';
import { createOpenAIEmbeddings } from '../../providers/openai/openai-embeddings.js';
import { createAnthropicProvider } from '../../providers/anthropic/anthropic-provider.js';
import { DeploymentHealth, type RoutingStrategy } from '../../providers/routing/router.js';
import { RoutedProvider, type ModelTarget, type RoutingSettings } from '../../providers/routing/routed-provider.js';

/** Model ids a deployment may never take: the template model and the embedded llama.cpp model. */
const RESERVED_IDS = ['sandbox', 'local'];

export interface DeploymentsDeps {
  store: Store;
  models: ModelRegistry;
  config: Config;
  limits: LimitStore;
  cipher: SecretCipher;
  /** With Redis, a change is announced to every instance on `${prefix}deployments`. */
  redis?: Redis | undefined;
  prefix: string;
  /** One line for the server's log (never holds a secret). */
  warn: (message: string) => void;
  /** Told of each routed attempt (metrics). */
  onOutcome?: RoutingSettings['onOutcome'];
}

/** A deployment's providers, kept while its row is unchanged (a reload reuses them). */
interface Built { version: string; provider: ModelProvider; quickProvider: ModelProvider; embeddings: EmbeddingProvider | undefined }

const priceOf = (m: DeploymentModelRecord): ModelPrice => ({ input: m.price.input, output: m.price.output, cached_input: m.price.cached_input ?? m.price.input });

/**
 * Model deployments (CONTRACT §12.4): CRUD for administrators, and the routed models they make in the
 * registry. The database is the truth: every change reloads it here and announces it (Redis pub/sub) so
 * every instance reloads within a moment; a periodic reload is the safety net. Environment-configured
 * providers are shown as read-only deployments (`env-openai`, `env-anthropic`).
 */
export class DeploymentsService {
  private readonly health = new Map<string, DeploymentHealth>();
  private readonly built = new Map<string, Built>();
  /** Model ids this service put in the registry. */
  private routed = new Set<string>();
  private records: DeploymentRecord[] = [];
  private readonly settings: RoutingSettings;
  private readonly origin = randomBytes(8).toString('hex');
  private readonly channel: string;
  private subscriber: Redis | undefined;
  private timer: NodeJS.Timeout | undefined;
  private reloading: Promise<void> | undefined;
  private reloadAgain = false;
  private readonly undecryptable = new Set<string>();
  /** The default model as configured (CODELOOM_DEFAULT_MODEL, or the first environment model); sandbox when neither (then the first deployment's model is the default). */
  private readonly configuredDefault: string;

  constructor(private readonly deps: DeploymentsDeps) {
    const { config } = deps;
    this.settings = {
      strategy: config.routing as RoutingStrategy, limits: deps.limits, cooldownFailures: config.cooldownFailures, cooldownMs: config.cooldownSeconds * 1000,
      onOutcome: deps.onOutcome,
    };
    this.channel = `${deps.prefix}deployments`;
    this.configuredDefault = config.defaultModel ?? deps.models.default;
  }

  /** Loads the deployments, then listens for change notices and reloads periodically. */
  async start(): Promise<void> {
    await this.reload();
    if (this.deps.redis) {
      this.subscriber = this.deps.redis.duplicate();
      this.subscriber.on('error', () => { /* reconnects by itself */ });
      this.subscriber.on('message', (_channel: string, message: string) => {
        if (message !== this.origin) void this.reload().catch((error) => this.deps.warn(`deployments: reload failed: ${String(error)}`));
      });
      // A notice missed while the link was down: the next periodic reload catches up, and so does a reconnect.
      this.subscriber.on('ready', () => { void this.reload().catch(() => {}); });
      await this.subscriber.subscribe(this.channel).catch(() => {});
    }
    this.timer = setInterval(() => { void this.reload().catch((error) => this.deps.warn(`deployments: reload failed: ${String(error)}`)); }, this.deps.config.deploymentsReload * 1000);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.reloading?.catch(() => {});
    if (this.subscriber) this.subscriber.disconnect();
  }

  /** Every deployment, the environment's first. */
  list(): Deployment[] {
    return [...this.environmentDeployments(), ...this.records.map((r) => this.view(r))];
  }

  async get(id: string): Promise<Deployment> {
    const env = this.environmentDeployments().find((d) => d.id === id);
    if (env) return env;
    const record = await this.deps.store.deployments.find(id);
    if (!record) throw notFound('deployment');
    return this.view(record);
  }

  async create(body: CreateDeploymentBody): Promise<Deployment> {
    this.checkModels(body.models, body.provider);
    const now = nowIso();
    const record: DeploymentRecord = {
      id: newId('dep'), name: body.name.trim(), provider: body.provider, baseUrl: body.base_url.replace(/\/+$/, ''),
      apiKeyEnc: body.api_key ? this.deps.cipher.seal(body.api_key) : null, models: body.models.map(cleanModel),
      weight: body.weight ?? 1, rpm: body.rpm ?? null, tpm: body.tpm ?? null, enabled: body.enabled ?? true, createdAt: now, updatedAt: now,
    };
    await this.deps.store.deployments.insert(record);
    await this.changed();
    return this.view(record);
  }

  async update(id: string, body: UpdateDeploymentBody): Promise<Deployment> {
    this.refuseEnvironment(id);
    const record = await this.deps.store.deployments.find(id);
    if (!record) throw notFound('deployment');
    const provider = body.provider ?? record.provider;
    if (body.models !== undefined || body.provider !== undefined) this.checkModels(body.models ?? record.models, provider);
    const next: DeploymentRecord = {
      ...record,
      ...(body.name !== undefined ? { name: body.name.trim() } : {}),
      provider,
      ...(body.base_url !== undefined ? { baseUrl: body.base_url.replace(/\/+$/, '') } : {}),
      // An empty api_key removes the key.
      ...(body.api_key !== undefined ? { apiKeyEnc: body.api_key ? this.deps.cipher.seal(body.api_key) : null } : {}),
      ...(body.models !== undefined ? { models: body.models.map(cleanModel) } : {}),
      ...(body.weight !== undefined ? { weight: body.weight } : {}),
      ...(body.rpm !== undefined ? { rpm: body.rpm } : {}),
      ...(body.tpm !== undefined ? { tpm: body.tpm } : {}),
      ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
      updatedAt: nowIso(),
    };
    await this.deps.store.deployments.update(next);
    await this.changed();
    return this.view(next);
  }

  async delete(id: string): Promise<void> {
    this.refuseEnvironment(id);
    if (!(await this.deps.store.deployments.delete(id))) throw notFound('deployment');
    await this.changed();
  }

  /** A tiny real call to the deployment's first model (one token), reported with its latency. */
  async test(id: string): Promise<DeploymentTestResult> {
    const deployment = await this.get(id);
    const model = deployment.models.find((m) => !m.embeddings) ?? deployment.models[0]!;
    let call: () => Promise<unknown>;
    if (deployment.read_only) {
      const registered = this.deps.models.find(model.id);
      if (!registered) throw notFound('model');
      call = () => registered.provider.generate({ model: registered.upstreamId, messages: [{ role: 'user', content: 'Say OK.' }], maxTokens: 1, signal: AbortSignal.timeout(15_000) });
    } else {
      const record = (await this.deps.store.deployments.find(id))!;
      // One attempt, no retries: the test reports what the back-end answers now.
      const built = this.build(record, 0);
      if (!built) throw new AppError('conflict', 'The deployment\'s API key cannot be decrypted with CODELOOM_SECRET_KEY (see the server log); set it again with PATCH.');
      const upstream = model.upstream_model ?? model.id;
      call = model.embeddings && built.embeddings
        ? () => built.embeddings!.embed({ model: upstream, input: ['ok'], signal: AbortSignal.timeout(15_000) })
        : () => built.provider.generate({ model: upstream, messages: [{ role: 'user', content: 'Say OK.' }], maxTokens: 1, signal: AbortSignal.timeout(15_000) });
    }
    const started = performance.now();
    try {
      await call();
      const latency = performance.now() - started;
      if (!deployment.read_only) this.healthOf(id).succeeded(latency);
      return { ok: true, model: model.id, latency_ms: Math.round(latency) };
    } catch (error) {
      const code = error instanceof AppError ? error.code : 'upstream_error';
      const message = error instanceof Error ? error.message : String(error);
      return { ok: false, model: model.id, latency_ms: Math.round(performance.now() - started), error: { code, message } };
    }
  }

  /** Health of every deployment on this instance (metrics). */
  healthList(): Array<{ id: string; name: string; health: DeploymentHealth }> {
    return this.records.map((r) => ({ id: r.id, name: r.name, health: this.healthOf(r.id) }));
  }

  /** Reloads from the database (one reload at a time; a request meanwhile runs once more after it). */
  reload(): Promise<void> {
    if (this.reloading) {
      this.reloadAgain = true;
      return this.reloading;
    }
    this.reloading = (async () => {
      try {
        do {
          this.reloadAgain = false;
          await this.load();
        } while (this.reloadAgain);
      } finally {
        this.reloading = undefined;
      }
    })();
    return this.reloading;
  }

  /** After a change on this instance: reload here, and tell the others. */
  private async changed(): Promise<void> {
    await this.reload();
    await this.deps.redis?.publish(this.channel, this.origin).catch((error) => this.deps.warn(`deployments: change notice not sent (${String(error)}); other instances reload within CODELOOM_DEPLOYMENTS_RELOAD seconds`));
  }

  private async load(): Promise<void> {
    const records = await this.deps.store.deployments.list();
    // Keys sealed under a former CODELOOM_SECRET_KEY are sealed again under the current one.
    for (const r of records) {
      if (!r.apiKeyEnc || !this.deps.cipher.needsRotation(r.apiKeyEnc)) continue;
      try {
        r.apiKeyEnc = this.deps.cipher.seal(this.deps.cipher.open(r.apiKeyEnc));
        await this.deps.store.deployments.setApiKeyEnc(r.id, r.apiKeyEnc);
      } catch { /* reported by build() */ }
    }
    this.records = records;
    this.apply();
  }

  /** Rebuilds the routed models from `records`, keeping each deployment's health and unchanged providers. */
  private apply(): void {
    const { models } = this.deps;
    const byModel = new Map<string, ModelTarget[]>();
    const specs = new Map<string, DeploymentModelRecord[]>();
    const live = new Set<string>();
    for (const r of this.records) {
      live.add(r.id);
      const health = this.healthOf(r.id);
      health.enabled = r.enabled;
      if (!r.enabled) continue;
      const built = this.build(r);
      if (!built) continue;
      for (const m of r.models) {
        if (this.clashesWithEnvironment(m.id)) continue;
        const target: ModelTarget = {
          deploymentId: r.id, provider: built.provider, quickProvider: built.quickProvider, embeddings: m.embeddings ? built.embeddings : undefined, upstreamModel: m.upstream_model ?? m.id,
          price: priceOf(m), weight: r.weight, rpm: r.rpm, tpm: r.tpm, health,
        };
        (byModel.get(m.id) ?? byModel.set(m.id, []).get(m.id)!).push(target);
        (specs.get(m.id) ?? specs.set(m.id, []).get(m.id)!).push(m);
      }
    }
    for (const id of [...this.health.keys()]) if (!live.has(id)) { this.health.delete(id); this.built.delete(id); }
    for (const id of this.routed) if (!byModel.has(id)) models.unregister(id);
    for (const [id, targets] of byModel) {
      const provider = new RoutedProvider(id, targets, this.settings);
      const ms = specs.get(id)!;
      const caps = ms.map((m) => m.max_output_tokens).filter((n): n is number => n !== undefined);
      const names = [...new Set(targets.map((t) => this.records.find((r) => r.id === t.deploymentId)!.name))];
      const embeddings = provider.embeddingsProvider();
      const model: RegisteredModel = {
        id, upstreamId: id, provider, description: `Served by ${names.length === 1 ? 'deployment' : `${names.length} deployments:`} ${names.join(', ')}`,
        maxOutputTokens: caps.length ? Math.min(...caps) : this.deps.config.maxOutputTokens,
        fillInMiddle: ms.every((m) => m.fim === true), price: provider.dearestPrice, ...(embeddings ? { embeddings } : {}),
      };
      models.register(model);
    }
    this.routed = new Set(byModel.keys());
    // With no model configured by environment or setting, the first deployment's model serves requests that name none.
    if (!this.deps.config.defaultModel && this.configuredDefault === 'sandbox') {
      const first = [...byModel.keys()][0];
      if (first && models.default === 'sandbox') models.setDefault(first);
      else if (!first && models.default !== 'sandbox') models.setDefault('sandbox');
      else if (first && !byModel.has(models.default)) models.setDefault(first);
    }
  }

  /** The deployment's providers (kept while its row is unchanged); with `maxRetries`, fresh ones that retry that often (the test call). */
  private build(r: DeploymentRecord, maxRetries?: number): Built | undefined {
    const version = `${r.updatedAt}|${r.apiKeyEnc ?? ''}|${r.provider}|${r.baseUrl}`;
    const cached = this.built.get(r.id);
    if (cached?.version === version && maxRetries === undefined) return cached;
    let apiKey = '';
    if (r.apiKeyEnc) {
      try {
        apiKey = this.deps.cipher.open(r.apiKeyEnc);
        this.undecryptable.delete(r.id);
      } catch (error) {
        if (!this.undecryptable.has(r.id)) this.deps.warn(`deployment ${r.id} (${r.name}) is skipped: its API key cannot be decrypted (${(error as Error).message}); every instance must share CODELOOM_SECRET_KEY`);
        this.undecryptable.add(r.id);
        return undefined;
      }
    }
    const http = { baseUrl: r.baseUrl, apiKey, timeoutMs: this.deps.config.upstreamTimeout * 1000, maxRetries: maxRetries ?? this.deps.config.upstreamRetries };
    // Two providers over the same connection pool: one retrying, one not (routed-provider.ts picks).
    const quick = { ...http, maxRetries: 0 };
    const built: Built = r.provider === 'anthropic'
      ? { version, provider: createAnthropicProvider(http), quickProvider: createAnthropicProvider(quick), embeddings: undefined }
      : { version, provider: createOpenAIProvider(http), quickProvider: createOpenAIProvider(quick), embeddings: r.models.some((m) => m.embeddings) ? createOpenAIEmbeddings(http) : undefined };
    if (maxRetries === undefined) this.built.set(r.id, built);
    return built;
  }

  private healthOf(id: string): DeploymentHealth {
    let h = this.health.get(id);
    if (!h) this.health.set(id, h = new DeploymentHealth(id));
    return h;
  }

  private view(r: DeploymentRecord): Deployment {
    const health = this.health.get(r.id) ?? new DeploymentHealth(r.id, r.enabled);
    return {
      id: r.id, name: r.name, provider: r.provider, base_url: r.baseUrl, has_api_key: r.apiKeyEnc !== null, models: r.models.map(cleanModel),
      weight: r.weight, rpm: r.rpm, tpm: r.tpm, enabled: r.enabled, read_only: false,
      health: r.enabled ? health.view() : { ...health.view(), status: 'disabled' }, created_at: r.createdAt, updated_at: r.updatedAt,
    };
  }

  /** A model id served by the environment's providers (or reserved) cannot be a deployment's. */
  private clashesWithEnvironment(id: string): boolean {
    return RESERVED_IDS.includes(id) || (this.deps.models.find(id) !== undefined && !this.routed.has(id));
  }

  private checkModels(list: readonly DeploymentModel[], provider: string): void {
    const errors: Array<{ path: string; message: string }> = [];
    const seen = new Set<string>();
    list.forEach((m, i) => {
      if (RESERVED_IDS.includes(m.id)) errors.push({ path: `/models/${i}/id`, message: `"${m.id}" is the ${m.id === 'sandbox' ? 'template model' : 'embedded llama.cpp model'}'s id; choose another` });
      else if (this.clashesWithEnvironment(m.id)) errors.push({ path: `/models/${i}/id`, message: `"${m.id}" is served by a provider configured by environment variables; choose another id` });
      if (seen.has(m.id)) errors.push({ path: `/models/${i}/id`, message: `"${m.id}" is listed twice` });
      seen.add(m.id);
      if (provider === 'anthropic' && (m.fim || m.embeddings)) errors.push({ path: `/models/${i}/${m.fim ? 'fim' : 'embeddings'}`, message: 'only OpenAI-compatible deployments offer fill-in-the-middle and embeddings' });
    });
    if (errors.length) throw new AppError('validation_failed', `Invalid deployment: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}.`, { errors });
  }

  private refuseEnvironment(id: string): void {
    if (id.startsWith('env-')) {
      if (!this.environmentDeployments().some((d) => d.id === id)) throw notFound('deployment');
      throw new AppError('conflict', `Deployment ${id} is configured by environment variables (${id === 'env-openai' ? 'OPENAI_BASE_URL, OPENAI_API_KEY, CODELOOM_OPENAI_MODELS' : 'ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, CODELOOM_ANTHROPIC_MODELS'}); change them there and restart, or add a deployment through this API instead.`);
    }
  }

  /** The providers configured by environment, as read-only deployments. */
  private environmentDeployments(): Deployment[] {
    const { config, models } = this.deps;
    const out: Deployment[] = [];
    const modelOf = (id: string, extra: Partial<DeploymentModel> = {}): DeploymentModel => {
      const price = models.find(id)?.price;
      return { id, upstream_model: id, ...extra, max_output_tokens: config.maxOutputTokens, price: price ? { input: price.input, output: price.output, cached_input: price.cached_input } : { input: 0, output: 0, cached_input: 0 } };
    };
    const envHealth = { status: 'ok' as const, consecutive_failures: 0, cooldown_until: null, latency_ms: null };
    if (config.openaiBaseUrl && config.openaiModels?.length) {
      out.push({
        id: 'env-openai', name: 'OpenAI-compatible (environment)', provider: 'openai', base_url: config.openaiBaseUrl, has_api_key: Boolean(config.openaiApiKey),
        models: config.openaiModels.map((id) => modelOf(id, { fim: config.openaiFimModels?.includes(id) ?? false, embeddings: config.openaiEmbeddingModels?.includes(id) ?? false })),
        weight: 1, rpm: null, tpm: null, enabled: true, read_only: true, health: envHealth, created_at: null, updated_at: null,
      });
    }
    if (config.anthropicApiKey && config.anthropicModels?.length) {
      out.push({
        id: 'env-anthropic', name: 'Anthropic (environment)', provider: 'anthropic', base_url: config.anthropicBaseUrl, has_api_key: true,
        models: config.anthropicModels.map((id) => modelOf(id)), weight: 1, rpm: null, tpm: null, enabled: true, read_only: true, health: envHealth, created_at: null, updated_at: null,
      });
    }
    return out;
  }
}

/** A model as stored and shown: only the fields given. */
function cleanModel(m: DeploymentModel | DeploymentModelRecord): DeploymentModel {
  const out: DeploymentModel = { id: m.id, price: { input: m.price.input, output: m.price.output, ...(m.price.cached_input !== undefined ? { cached_input: m.price.cached_input } : {}) } };
  if (m.upstream_model !== undefined) out.upstream_model = m.upstream_model;
  if (m.fim !== undefined) out.fim = m.fim;
  if (m.embeddings !== undefined) out.embeddings = m.embeddings;
  if (m.context_window !== undefined) out.context_window = m.context_window;
  if (m.max_output_tokens !== undefined) out.max_output_tokens = m.max_output_tokens;
  return out;
}

