import { AppError } from '../../errors.js';
import type { ModelRegistry, RegisteredModel } from '../../providers/model-registry.js';
import type { ChatMessage, ToolCallDelta } from '../../providers/provider.js';
import type { ConversationOptions } from '../../providers/conversation.js';
import { nowIso } from '../../storage/ids.js';
import type { Store } from '../../storage/store.js';
import type { Principal } from '../../identity/principal.js';
import type { GenerationService } from './generation-service.js';
import type { CallOrigin } from '../../plugins/tracing.js';
import { countPromptTokens, type ModelCallResult } from './model-call.js';
import { parseFencedFiles } from './parse-fenced-files.js';
import { pickMainFile } from './main-file.js';

/**
 * One chat call from a vendor wire format (OpenAI's chat and completions, Anthropic's Messages API), once
 * its codec has decoded it into the internal conversation (docs/decisions/0006-conversation-model.md).
 */
export interface ChatCallSpec {
  /** Absent: the server's default model. */
  model: string | undefined;
  messages: ChatMessage[];
  maxTokens?: number | undefined;
  temperature?: number | undefined;
  topP?: number | undefined;
  topK?: number | undefined;
  stop?: string[] | undefined;
  suffix?: string | undefined;
  /** POST /openai/v1/completions: the prompt goes unchanged to an OpenAI-compatible /v1/completions (ModelCallOptions.rawPrompt). */
  rawPrompt?: boolean | undefined;
  /** Tools, tool choice, parallel tool calls and response format: only the fields the request set. */
  conversation: ConversationOptions;
}

export interface ChatCallIO {
  /** The answer's id (also the generation history record's). */
  id: string;
  signal: AbortSignal;
  onText?: ((text: string) => void | Promise<void>) | undefined;
  onToolCall?: ((delta: ToolCallDelta) => void | Promise<void>) | undefined;
  onAttempt?: ((model: RegisteredModel) => void) | undefined;
  /** The route, request id and trace parent of the request (the request log and traces name them). */
  origin?: CallOrigin | undefined;
}

export interface ChatCallResult extends ModelCallResult {
  id: string;
  /** Unix seconds of the history record. */
  created: number;
  totalMs: number;
}

/**
 * The one call path of the vendor-compatible routes: resolves the model (the sandbox environment is always
 * served by the sandbox model), calls it through GenerationService.callModel (the one reserve → stream →
 * settle loop: limits, budgets, fallbacks and usage rows) and records the call in generation history, with
 * `api` naming the wire format it came in.
 */
export class ChatCalls {
  constructor(private readonly store: Store, private readonly models: ModelRegistry, private readonly generation: GenerationService) {}

  resolveModel(principal: Principal, id: string | undefined): RegisteredModel {
    const modelId = id ?? this.models.default;
    const model = this.models.find(modelId);
    if (!model) {
      throw new AppError('not_found', `The model "${modelId}" does not exist. Available models: ${this.models.ids().join(', ')}.`, { errors: [{ path: '/model', message: `must be one of: ${this.models.ids().join(', ')}` }] });
    }
    return principal.environment === 'sandbox' ? this.models.find('sandbox')! : model;
  }

  /**
   * The prompt tokens Codeloom counts for a call before making it: the sandbox's exact count, else the bound
   * the token windows reserve (an upper bound: never fewer than the model's own tokenizer makes).
   */
  countPromptTokens(principal: Principal, spec: ChatCallSpec): { model: RegisteredModel; tokens: number; exact: boolean } {
    const model = this.resolveModel(principal, spec.model);
    const counted = countPromptTokens({ subject: principal, model, messages: spec.messages, maxTokens: spec.maxTokens, stop: spec.stop, suffix: spec.suffix, ...spec.conversation });
    return { model, ...counted };
  }

  async call(principal: Principal, spec: ChatCallSpec, api: string, io: ChatCallIO): Promise<ChatCallResult> {
    const started = performance.now();
    const model = this.resolveModel(principal, spec.model);
    const result = await this.generation.callModel({
      subject: principal, model, messages: spec.messages, maxTokens: spec.maxTokens, temperature: spec.temperature,
      topP: spec.topP, topK: spec.topK, stop: spec.stop, suffix: spec.suffix, rawPrompt: spec.rawPrompt, signal: io.signal, onText: io.onText, onToolCall: io.onToolCall, onAttempt: io.onAttempt,
      origin: io.origin, ...spec.conversation,
    });
    const createdAt = nowIso();
    const files = parseFencedFiles(result.text, 'text');
    await this.store.generations.insert({
      id: io.id, userId: principal.user.id, environment: principal.environment, projectId: null, model: result.model.id, language: 'text',
      prompt: [...spec.messages].reverse().find((m) => m.role === 'user')?.content ?? '',
      request: {
        api, messages: spec.messages.length, max_tokens: spec.maxTokens ?? null, temperature: spec.temperature ?? null,
        ...(spec.suffix !== undefined ? { suffix: true } : {}), ...(spec.conversation.tools ? { tools: spec.conversation.tools.length } : {}), ...(spec.conversation.responseFormat ? { response_format: spec.conversation.responseFormat.type } : {}),
      },
      // An answer that is only tool calls is recorded as their JSON, so history shows what the model did.
      output: result.toolCalls && !result.text ? JSON.stringify(result.toolCalls) : result.text, files, code: pickMainFile(files).content, promptTokens: result.usage.promptTokens, completionTokens: result.usage.completionTokens,
      processingMs: Math.round(performance.now() - started), finishReason: result.finishReason, createdAt, costMicros: result.costMicros,
    });
    return { ...result, id: io.id, created: Math.floor(Date.parse(createdAt) / 1000), totalMs: performance.now() - started };
  }
}
