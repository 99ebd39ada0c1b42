import type { EmbeddingsBody, EmbeddingsResponse } from '@codeloom/protocol';
import { AppError, CancelledError } from '../../errors.js';
import type { Principal } from '../../identity/principal.js';
import type { TokenSpend } from '../../limits/token-spend.js';
import { costMicros } from '../../config/model-prices.js';
import type { ModelRegistry, RegisteredModel } from '../../providers/model-registry.js';
import type { UsageMeter } from '../generate/model-call.js';

/** Tokens an input may count beyond its bytes: the begin and end markers some embedding models add. */
const INPUT_OVERHEAD = 2;

/**
 * POST /openai/v1/embeddings (CONTRACT §12.3): for models that offer embeddings (the sandbox's offline
 * vectors; CODELOOM_OPENAI_EMBEDDING_MODELS upstream). The same spend rules as a model call: the inputs'
 * most tokens (a text's UTF-8 bytes, which no byte-level tokenizer exceeds; a token-id input's exact length)
 * are reserved in every token window and dollar budget first, then settled to what the provider reported
 * (or that bound when it reported nothing); a usage row is written either way.
 */
export class EmbeddingsService {
  constructor(private readonly models: ModelRegistry, private readonly spend: TokenSpend, private readonly meter: UsageMeter) {}

  async embed(principal: Principal, body: EmbeddingsBody, signal?: AbortSignal): Promise<EmbeddingsResponse> {
    const model = this.modelFor(principal, body.model);
    const embeddings = model.embeddings!;
    const input: Array<string | number[]> = typeof body.input === 'string' ? [body.input]
      : body.input.length && typeof body.input[0] === 'number' ? [body.input as number[]]
        : (body.input as Array<string | number[]>);
    const bound = input.reduce((n, x) => n + (embeddings.plannedTokens?.(x) ?? (typeof x === 'string' ? Buffer.byteLength(x, 'utf8') + INPUT_OVERHEAD : x.length)), 0);
    const reservation = await this.spend.reserve(principal, bound, { prompt: bound, output: 0 }, model.price ? costMicros(model.price, { promptTokens: bound, completionTokens: 0 }) : 0);
    let tokens = bound;
    let outcome: 'succeeded' | 'failed' | 'cancelled' = 'failed';
    try {
      if (signal?.aborted) throw new CancelledError();
      const out = await embeddings.embed({ model: model.upstreamId, input, ...(body.dimensions !== undefined ? { dimensions: body.dimensions } : {}), signal });
      tokens = out.promptTokens ?? bound;
      outcome = 'succeeded';
      const base64 = body.encoding_format === 'base64';
      return {
        object: 'list',
        data: out.vectors.map((v, index) => ({ object: 'embedding', index, embedding: base64 ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v })),
        model: model.id,
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      };
    } catch (error) {
      if (signal?.aborted || error instanceof CancelledError) outcome = 'cancelled';
      throw error;
    } finally {
      const cost = costMicros(model.price, { promptTokens: tokens, completionTokens: 0 });
      await Promise.all([
        reservation.settle(tokens, cost),
        this.meter.record({ subject: principal, model: model.id, promptTokens: tokens, completionTokens: 0, costMicros: cost, outcome }),
      ]);
    }
  }

  /** The model asked for (the sandbox in the sandbox environment); 404 when unknown, 400 naming `model` when it offers no embeddings. */
  private modelFor(principal: Principal, id: string): RegisteredModel {
    const asked = this.models.find(id);
    if (!asked) {
      throw new AppError('not_found', `The model "${id}" does not exist. Available models: ${this.models.ids().join(', ')}.`, { errors: [{ path: '/model', message: `must be one of: ${this.models.ids().join(', ')}` }] });
    }
    const model = principal.environment === 'sandbox' ? this.models.find('sandbox')! : asked;
    if (!model.embeddings) {
      const offering = this.models.ids().filter((m) => this.models.find(m)!.embeddings);
      throw new AppError('validation_failed', `The model "${id}" does not offer embeddings; models that do: ${offering.join(', ')} (CODELOOM_OPENAI_EMBEDDING_MODELS names the upstream ones).`, { errors: [{ path: '/model', message: 'does not offer embeddings' }] });
    }
    return model;
  }
}
