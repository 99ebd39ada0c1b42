import type { RegisteredModel } from '../../providers/model-registry.js';
import type { Store } from '../../storage/store.js';
import type { Principal } from '../../identity/principal.js';
import type { GenerationService } from '../generate/generation-service.js';
import { ChatCalls, type ChatCallIO, type ChatCallResult } from '../generate/chat-call.js';
import type { ModelRegistry } from '../../providers/model-registry.js';
import type { OpenAICallSpec } from './openai-request.js';

export type OpenAICallResult = ChatCallResult;

/**
 * One /openai/v1 call, on the one call path the vendor-compatible routes share (modules/generate/chat-call.ts):
 * the model resolved (the sandbox environment is always served by the sandbox model), the call made through
 * GenerationService.callModel (limits, budgets, fallbacks, usage) and recorded in generation history.
 */
export class OpenAIService {
  private readonly calls: ChatCalls;

  constructor(store: Store, models: ModelRegistry, generation: GenerationService) {
    this.calls = new ChatCalls(store, models, generation);
  }

  resolveModel(principal: Principal, id: string | undefined): RegisteredModel {
    return this.calls.resolveModel(principal, id);
  }

  call(principal: Principal, spec: OpenAICallSpec, kind: 'chat' | 'completion', io: ChatCallIO): Promise<OpenAICallResult> {
    return this.calls.call(principal, spec, kind === 'chat' ? 'openai.chat.completions' : 'openai.completions', io);
  }
}
