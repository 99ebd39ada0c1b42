import { AppError } from '../../errors.js';
import type { ModelRegistry, RegisteredModel } from '../../providers/model-registry.js';
import { nowIso } from '../../storage/ids.js';
import type { Store } from '../../storage/store.js';
import type { Principal } from '../../identity/principal.js';
import type { GenerationService } from '../generate/generation-service.js';
import type { ModelCallResult } from '../generate/model-call.js';
import { parseFencedFiles } from '../generate/parse-fenced-files.js';
import { pickMainFile } from '../generate/main-file.js';
import type { OpenAICallSpec } from './openai-request.js';
import type { ToolCallDelta } from '../../providers/provider.js';

export interface OpenAICallResult extends ModelCallResult {
  id: string;
  created: number;
  totalMs: number;
}

/**
 * One /openai/v1 call: resolves the model (the sandbox environment is always served by the sandbox
 * model), makes the call through GenerationService.callModel (the one reserve → stream → settle loop,
 * usage accounting included) and records it in generation history.
 */
export class OpenAIService {
  constructor(private readonly store: Store, private readonly models: ModelRegistry, private readonly generation: GenerationService) {}

  resolveModel(principal: Principal, id: string | undefined): RegisteredModel {
    const modelId = id ?? this.models.default;
    const model = this.models.find(modelId);
    if (!model) {
      throw new AppError('not_found', `The model "${modelId}" does not exist. Available models: ${this.models.ids().join(', ')}.`, { errors: [{ path: '/model', message: `must be one of: ${this.models.ids().join(', ')}` }] });
    }
    return principal.environment === 'sandbox' ? this.models.find('sandbox')! : model;
  }

  async call(principal: Principal, spec: OpenAICallSpec, kind: 'chat' | 'completion', io: { id: string; signal: AbortSignal; onText?: (text: string) => void | Promise<void>; onToolCall?: (delta: ToolCallDelta) => void | Promise<void>; onAttempt?: (model: RegisteredModel) => void }): Promise<OpenAICallResult> {
    const started = performance.now();
    const model = this.resolveModel(principal, spec.model);
    const result = await this.generation.callModel({
      subject: principal, model, messages: spec.messages, maxTokens: spec.maxTokens, temperature: spec.temperature,
      topP: spec.topP, stop: spec.stop, suffix: spec.suffix, rawPrompt: spec.rawPrompt, signal: io.signal, onText: io.onText, onToolCall: io.onToolCall, onAttempt: io.onAttempt,
      ...spec.conversation,
    });
    const id = io.id;
    const createdAt = nowIso();
    const files = parseFencedFiles(result.text, 'text');
    await this.store.generations.insert({
      id, userId: principal.user.id, environment: principal.environment, projectId: null, model: result.model.id, language: 'text',
      prompt: [...spec.messages].reverse().find((m) => m.role === 'user')?.content ?? '',
      request: {
        api: kind === 'chat' ? 'openai.chat.completions' : 'openai.completions', messages: spec.messages.length, max_tokens: spec.maxTokens ?? null, temperature: spec.temperature ?? null,
        ...(spec.suffix !== undefined ? { suffix: true } : {}), ...(spec.conversation.tools ? { tools: spec.conversation.tools.length } : {}), ...(spec.conversation.responseFormat ? { response_format: spec.conversation.responseFormat.type } : {}),
      },
      // An answer that is only tool calls is recorded as their JSON, so history shows what the model did.
      output: result.toolCalls && !result.text ? JSON.stringify(result.toolCalls) : result.text, files, code: pickMainFile(files).content, promptTokens: result.usage.promptTokens, completionTokens: result.usage.completionTokens,
      processingMs: Math.round(performance.now() - started), finishReason: result.finishReason, createdAt, costMicros: result.costMicros,
    });
    return { ...result, id, created: Math.floor(Date.parse(createdAt) / 1000), totalMs: performance.now() - started };
  }
}
