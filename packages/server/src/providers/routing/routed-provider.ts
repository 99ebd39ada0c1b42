import { CancelledError, ProviderError } from '../../errors.js';
import type { ModelPrice } from '../../config/model-prices.js';
import type { LimitStore, WindowSpec } from '../../limits/limit-store.js';
import type { ConversationCapabilities } from '../conversation.js';
import { unsupportedField } from '../conversation.js';
import type { EmbeddingProvider, EmbedOptions, EmbedOutput } from '../embeddings.js';
import type { GenerateOutput, ModelCallOptions, ModelProvider, StreamPart } from '../provider.js';
import { chooseTarget, type DeploymentHealth, type HealthOptions, type RoutingStrategy } from './router.js';

/** One deployment serving one model. */
export interface ModelTarget {
  deploymentId: string;
  /** The deployment's provider, retrying transient failures (CODELOOM_UPSTREAM_RETRIES): used when no other deployment could take the call. */
  provider: ModelProvider;
  /** The same without retries: used while another deployment could take the call, so a failing one hands over at once. */
  quickProvider?: ModelProvider | undefined;
  embeddings?: EmbeddingProvider | undefined;
  /** What the deployment calls the model. */
  upstreamModel: string;
  price: ModelPrice;
  weight: number;
  /** Upstream requests and tokens per minute across every instance (LimitStore); null: no limit. */
  rpm: number | null;
  tpm: number | null;
  health: DeploymentHealth;
}

/** How a routed model routes: shared by every routed model of an instance. */
export interface RoutingSettings extends HealthOptions {
  strategy: RoutingStrategy;
  limits: LimitStore;
  /** Told of each attempt's outcome (metrics). */
  onOutcome?: ((target: ModelTarget, ok: boolean) => void) | undefined;
}

/**
 * A failure that is the upstream's fault and counts towards a cooldown: 5xx, 429, timeouts, connection
 * errors. A 4xx the upstream answered (upstream_rejected, a bad key) and a cancel do not.
 */
export function upstreamsFault(error: unknown): boolean {
  if (!(error instanceof ProviderError) || error.kind === 'upstream_rejected') return false;
  const status = error.upstreamStatus;
  return status === undefined || status === 429 || status >= 500;
}

/** Prompt tokens of a call, estimated before it (four bytes a token) for the tpm window; settled to the reported figure after. */
function estimateTokens(options: ModelCallOptions): number {
  let bytes = 0;
  for (const m of options.messages) bytes += m.content.length;
  return Math.ceil(bytes / 4) + 1;
}

const quotaWindows = (t: ModelTarget): { windows: WindowSpec[]; costs: (tokens: number) => number[] } => {
  const windows: WindowSpec[] = [];
  const kinds: Array<'r' | 't'> = [];
  if (t.rpm !== null) { windows.push({ key: `dep:${t.deploymentId}:rpm`, limit: t.rpm, windowSec: 60, owner: 'this deployment\'s' }); kinds.push('r'); }
  if (t.tpm !== null) { windows.push({ key: `dep:${t.deploymentId}:tpm`, limit: t.tpm, windowSec: 60, owner: 'this deployment\'s' }); kinds.push('t'); }
  return { windows, costs: (tokens) => kinds.map((k) => (k === 'r' ? 1 : tokens)) };
};

/**
 * The provider of a model served by deployments (CONTRACT §12.4): each call goes to one deployment the router
 * picks, within that deployment's rpm/tpm (held in the LimitStore, so across instances); a deployment at its
 * quota, or failing before the first piece of the answer, hands the call to the next one. When none is left
 * the call fails as the last failure did, or 429 `upstream_rate_limited` with Retry-After when all were at
 * their quota — both let model fallbacks (CODELOOM_MODEL_FALLBACKS) take over on top.
 */
export class RoutedProvider implements ModelProvider {
  readonly name: string;
  readonly topK: boolean;
  readonly conversation: ConversationCapabilities | undefined;

  constructor(readonly modelId: string, readonly targets: readonly ModelTarget[], private readonly settings: RoutingSettings) {
    const kinds = [...new Set(targets.map((t) => t.provider.name))];
    this.name = kinds.length === 1 ? kinds[0]! : kinds.join('+');
    this.topK = targets.every((t) => t.provider.topK === true);
    // What any of them honours; a call is routed only to those that honour what it uses.
    this.conversation = targets.find((t) => t.provider.conversation)?.provider.conversation;
    for (const t of targets) {
      const c = t.provider.conversation;
      if (c && this.conversation && c !== this.conversation) {
        this.conversation = { tools: this.conversation.tools || c.tools, responseFormats: [...new Set([...this.conversation.responseFormats, ...c.responseFormats])] };
      }
    }
  }

  /**
   * The dearest price among the deployments, field by field (an upper bound of every deployment's cost): the
   * reservation holds at it, each call is charged at the deployment that served (ModelCallOptions.onRoute).
   */
  get dearestPrice(): ModelPrice {
    const p = { input: 0, output: 0, cached_input: 0 };
    for (const t of this.targets) {
      p.input = Math.max(p.input, t.price.input);
      p.output = Math.max(p.output, t.price.output);
      p.cached_input = Math.max(p.cached_input, t.price.cached_input);
    }
    return p;
  }

  /** Picks the next deployment for a call, taking its quota; undefined when none is left (`state` says why). */
  private async next(options: ModelCallOptions, tried: ModelTarget[], state: { retryAfterSec: number; atQuota: boolean }, tokens: number): Promise<{ target: ModelTarget; settle: (used: number) => void } | undefined> {
    const usesConversation = options.tools !== undefined || options.responseFormat !== undefined || options.toolChoice !== undefined;
    for (;;) {
      const target = chooseTarget(this.targets, this.settings.strategy, Date.now(), tried, Math.random());
      if (!target) return undefined;
      tried.push(target);
      if (usesConversation && unsupportedField(target.provider.conversation, options) !== undefined) continue;
      if (target.rpm === null && target.tpm === null) return { target, settle: () => {} };
      const { windows, costs } = quotaWindows(target);
      const cost = costs(tokens);
      const taken = await this.settings.limits.consume(windows, cost);
      if (!taken.allowed) {
        state.atQuota = true;
        // The windows that refused (too little left for this call's share); the call may come back when the first of them resets.
        let resetAt = Infinity;
        taken.states.forEach((s, i) => { if (s.remaining < cost[i]!) resetAt = Math.min(resetAt, s.resetAt); });
        if (resetAt === Infinity) resetAt = Math.min(...taken.states.map((s) => s.resetAt));
        const wait = Math.max(1, Math.ceil(resetAt - taken.atMs / 1000));
        state.retryAfterSec = state.retryAfterSec ? Math.min(state.retryAfterSec, wait) : wait;
        continue;
      }
      const tpm = target.tpm !== null ? [windows[windows.length - 1]!] : [];
      return { target, settle: (used) => { if (tpm.length && used !== tokens) this.settings.limits.adjust(tpm, used - tokens, taken.atMs).catch(() => {}); } };
    }
  }

  async *stream(options: ModelCallOptions): AsyncIterable<StreamPart> {
    const tried: ModelTarget[] = [];
    const state = { retryAfterSec: 0, atQuota: false };
    const tokens = estimateTokens(options);
    let lastError: unknown;
    for (;;) {
      const picked = await this.next(options, tried, state, tokens);
      if (!picked) throw this.exhausted(lastError, state);
      const { target, settle } = picked;
      options.onRoute?.(target.deploymentId, target.price);
      // While another deployment could take the call, a failure hands over at once instead of retrying here.
      const provider = target.quickProvider && tried.length < this.targets.length && chooseTarget(this.targets, this.settings.strategy, Date.now(), tried, 0) !== undefined
        ? target.quickProvider : target.provider;
      const started = performance.now();
      target.health.inFlight++;
      let produced = false;
      let used = tokens;
      try {
        for await (const part of provider.stream({ ...options, model: target.upstreamModel })) {
          produced = true;
          if (part.type === 'finish') used = (part.usage.promptTokens ?? tokens) + (part.usage.completionTokens ?? 0);
          yield part;
        }
        target.health.succeeded(performance.now() - started);
        this.settings.onOutcome?.(target, true);
        return;
      } catch (error) {
        if (upstreamsFault(error) && !options.signal?.aborted && !(error instanceof CancelledError)) {
          target.health.failed(this.settings);
          this.settings.onOutcome?.(target, false);
        }
        // Before the first piece another deployment may serve; after it, never (the caller has text).
        if (produced || options.signal?.aborted || !upstreamsFault(error)) throw error;
        lastError = error;
      } finally {
        target.health.inFlight--;
        settle(used);
      }
    }
  }

  async generate(options: ModelCallOptions): Promise<GenerateOutput> {
    let text = '';
    const out: GenerateOutput = { text: '', usage: {}, finishReason: 'stop' };
    const calls = new Map<number, { id: string; name: string; arguments: string }>();
    for await (const part of this.stream(options)) {
      if (part.type === 'text') text += part.text;
      else if (part.type === 'tool-call') {
        const c = calls.get(part.index) ?? { id: part.id ?? '', name: part.name ?? '', arguments: '' };
        c.arguments += part.arguments;
        calls.set(part.index, c);
      } else { out.usage = part.usage; out.finishReason = part.finishReason; }
    }
    out.text = text;
    if (calls.size) out.toolCalls = [...calls.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c);
    return out;
  }

  /** Embeddings through the deployments that offer them for this model (routed like calls). */
  embeddingsProvider(): EmbeddingProvider | undefined {
    const targets = this.targets.filter((t) => t.embeddings);
    if (!targets.length) return undefined;
    return {
      embed: async (o: EmbedOptions): Promise<EmbedOutput> => {
        const tried: ModelTarget[] = [];
        let lastError: unknown;
        for (;;) {
          const target = chooseTarget(targets, this.settings.strategy, Date.now(), tried, Math.random());
          if (!target) throw this.exhausted(lastError, { retryAfterSec: 0, atQuota: false });
          tried.push(target);
          const started = performance.now();
          try {
            const out = await target.embeddings!.embed({ ...o, model: target.upstreamModel });
            target.health.succeeded(performance.now() - started);
            return out;
          } catch (error) {
            if (!upstreamsFault(error) || o.signal?.aborted) throw error;
            target.health.failed(this.settings);
            lastError = error;
          }
        }
      },
    };
  }

  private exhausted(lastError: unknown, state: { retryAfterSec: number; atQuota: boolean }): Error {
    if (lastError) return lastError as Error;
    if (state.atQuota) {
      return new ProviderError('upstream_rate_limited', `Every deployment of model "${this.modelId}" is at its requests or tokens per minute; retry after ${state.retryAfterSec} s.`, true, 429, { headers: { 'retry-after': String(state.retryAfterSec) } });
    }
    const cooling = this.targets.filter((t) => t.health.enabled && t.health.cooldownUntil > Date.now());
    const wait = cooling.length ? Math.max(1, Math.ceil((Math.min(...cooling.map((t) => t.health.cooldownUntil)) - Date.now()) / 1000)) : 30;
    return new ProviderError('service_unavailable', `No deployment of model "${this.modelId}" can take the call now (${cooling.length ? 'all are cooling down after failures' : 'none is enabled'}); retry after ${wait} s.`, true, undefined, { headers: { 'retry-after': String(wait) } });
  }
}
