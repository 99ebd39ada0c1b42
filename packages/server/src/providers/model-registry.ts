import type { ModelInfo } from '@codeloom/protocol';
import type { ModelProvider } from './provider.js';
import type { EmbeddingProvider } from './embeddings.js';
import { FREE, type ModelPrice } from '../config/model-prices.js';

export interface RegisteredModel {
  /** The id callers use. */
  id: string;
  /** What the upstream calls it. */
  upstreamId: string;
  provider: ModelProvider;
  description: string;
  /** Most tokens one answer may have when the request names no max_tokens (sent upstream, and reserved). Default DEFAULT_MAX_OUTPUT_TOKENS. */
  maxOutputTokens?: number;
  /** Takes a fill-in-the-middle suffix (default: whether its provider does; CODELOOM_OPENAI_FIM_MODELS turns it on for OpenAI-compatible models). */
  fillInMiddle?: boolean;
  /** Tried in order when this model's provider fails before the first token (CODELOOM_MODEL_FALLBACKS). */
  fallbacks?: RegisteredModel[];
  /** USD per million tokens (CODELOOM_MODEL_PRICES); absent: the model costs 0. */
  price?: ModelPrice;
  /** Offers embeddings (POST /openai/v1/embeddings): the sandbox model, and CODELOOM_OPENAI_EMBEDDING_MODELS. */
  embeddings?: EmbeddingProvider;
}

export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/** Whether a model takes a suffix (fill-in-the-middle). */
export function takesSuffix(model: RegisteredModel): boolean {
  return model.fillInMiddle ?? model.provider.fillInMiddle ?? false;
}

/** The output cap of a call: the request's max_tokens, else the model's own cap. */
export function outputCap(model: RegisteredModel, maxTokens: number | undefined): number {
  return maxTokens ?? model.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
}

/** Model ids → providers, built once from the configuration. */
export class ModelRegistry {
  private readonly models = new Map<string, RegisteredModel>();
  private defaultId = 'sandbox';

  register(model: RegisteredModel): void {
    this.models.set(model.id, model);
  }

  /** Removes a model (a deployment no longer serves it); the default goes back to the sandbox if it was this one. */
  unregister(id: string): void {
    if (id === 'sandbox') return;
    this.models.delete(id);
    if (this.defaultId === id) this.defaultId = 'sandbox';
  }

  setDefault(id: string): void {
    if (!this.models.has(id)) throw new Error(`CODELOOM_DEFAULT_MODEL: unknown model "${id}"; configured: ${this.ids().join(', ')}`);
    this.defaultId = id;
  }

  get default(): string {
    return this.defaultId;
  }

  find(id: string): RegisteredModel | undefined {
    return this.models.get(id);
  }

  ids(): string[] {
    return [...this.models.keys()];
  }

  list(): ModelInfo[] {
    return [...this.models.values()].map((m) => ({ id: m.id, provider: m.provider.name, default: m.id === this.defaultId, description: m.description, price: { ...(m.price ?? FREE) } }));
  }

  async close(): Promise<void> {
    const providers = new Set([...this.models.values()].map((m) => m.provider));
    await Promise.all([...providers].map((p) => p.close?.()));
  }
}
