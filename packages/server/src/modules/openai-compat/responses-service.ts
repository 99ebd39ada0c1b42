import { AppError } from '../../errors.js';
import type { Principal } from '../../identity/principal.js';
import type { ChatMessage, ToolCallDelta } from '../../providers/provider.js';
import type { ConversationOptions } from '../../providers/conversation.js';
import type { RegisteredModel } from '../../providers/model-registry.js';
import type { ModelCallResult } from '../generate/model-call.js';
import { newId, nowIso } from '../../storage/ids.js';
import type { Store } from '../../storage/store.js';
import { invalid, type ResponsesCallSpec } from './responses-request.js';
import { wireId, outputItems, outputMessages, responseObject, statusOf, toUsage, type OutputItem, type ResponseHead, type ResponseObject } from './responses-object.js';
import type { CallOrigin } from '../../plugins/tracing.js';

/** How long a stored response is kept (unless deleted first): 30 days, as OpenAI keeps them. */
export const RESPONSE_RETENTION_MS = 30 * 24 * 3600 * 1000;
/**
 * The most conversation (previous response's and this input, as JSON) a request with `store` may carry: a stored
 * response holds that, plus its answer (bounded by the output cap) in the conversation and the response object.
 */
export const MAX_STORED_CONVERSATION_BYTES = 6 * 1024 * 1024;
/** How often expired responses are deleted. */
export const RESPONSE_CLEANUP_INTERVAL_MS = 3600 * 1000;

/**
 * The one model-call path of the vendor-compatible routes (modules/generate/chat-call.ts's ChatCalls, or
 * OpenAIService.call): limits, budgets, fallbacks, usage rows and generation history, with `api` naming the
 * wire format in history.
 */
export interface ChatCaller {
  call(principal: Principal, spec: { model: string | undefined; messages: ChatMessage[]; maxTokens?: number | undefined; temperature?: number | undefined; topP?: number | undefined; conversation: ConversationOptions }, api: string, io: {
    id: string; signal: AbortSignal;
    onText?: ((text: string) => void | Promise<void>) | undefined;
    onToolCall?: ((delta: ToolCallDelta) => void | Promise<void>) | undefined;
    onAttempt?: ((model: RegisteredModel) => void) | undefined;
    origin?: CallOrigin | undefined;
  }): Promise<ModelCallResult>;
}

/** An error in OpenAI's shape with a status and body of its own (not-found answers, which OpenAI types as invalid requests). */
export class ResponsesWireError extends Error {
  constructor(readonly status: number, readonly body: { message: string; type: string; param: string | null; code: string | null }) {
    super(body.message);
  }
}

export const responseNotFound = (id: string) => new ResponsesWireError(404, { message: `Response with id '${id}' not found.`, type: 'invalid_request_error', param: null, code: 'not_found' });

/** What a streaming caller sees of a call: the head before the model runs, and each piece of output. */
export interface ResponsesIO {
  signal: AbortSignal;
  /** Called once the previous response (if any) is loaded and the request checked, before the model call. */
  onStart?: (head: ResponseHead) => void | Promise<void>;
  onText?: (text: string) => void | Promise<void>;
  onToolCall?: (delta: ToolCallDelta) => void | Promise<void>;
  onAttempt?: (model: RegisteredModel) => void;
  /** The request's route, id and trace parent (the request log and traces name them). */
  origin?: CallOrigin | undefined;
  /** The output items as streamed (with the ids the events carried); absent: made from the result. */
  output?: (result: ModelCallResult) => OutputItem[] | Promise<OutputItem[]>;
}

/**
 * POST/GET/DELETE /openai/v1/responses: continues a stored conversation (`previous_response_id`), makes the call
 * on the one path, answers OpenAI's `response` object and keeps it (with its conversation) when `store` is set.
 */
export class ResponsesService {
  private cleanup: NodeJS.Timeout | undefined;

  constructor(private readonly store: Store, private readonly calls: ChatCaller, private readonly models: { default: string }) {}

  async create(principal: Principal, spec: ResponsesCallSpec, io: ResponsesIO): Promise<ResponseObject> {
    const scope = { orgId: principal.org.id, environment: principal.environment };
    let history: ChatMessage[] = [];
    if (spec.previousResponseId) {
      const previous = await this.store.responses.get(scope, spec.previousResponseId, nowIso());
      if (!previous) {
        throw new ResponsesWireError(400, { message: `Previous response with id '${spec.previousResponseId}' not found.`, type: 'invalid_request_error', param: 'previous_response_id', code: 'previous_response_not_found' });
      }
      history = JSON.parse(previous.conversation) as ChatMessage[];
    }
    const conversation = [...history, ...spec.input];
    checkOutputs(conversation, spec);
    if (spec.store && Buffer.byteLength(JSON.stringify(conversation), 'utf8') > MAX_STORED_CONVERSATION_BYTES) {
      throw invalid('store', `would keep a conversation of more than ${MAX_STORED_CONVERSATION_BYTES} bytes (6 MiB); send store: false with the whole input, or start a new conversation`);
    }
    const messages: ChatMessage[] = spec.instructions !== null ? [{ role: 'system', content: spec.instructions }, ...conversation] : conversation;
    const head: ResponseHead = { id: wireId('resp'), createdAt: Math.floor(Date.now() / 1000), model: spec.model ?? this.models.default };
    await io.onStart?.(head);
    const result = await this.calls.call(principal, {
      model: spec.model, messages, maxTokens: spec.maxTokens, temperature: spec.temperature, topP: spec.topP, conversation: spec.conversation,
    }, 'openai.responses', { id: newId('gen'), signal: io.signal, onText: io.onText, onToolCall: io.onToolCall, onAttempt: io.onAttempt, origin: io.origin }).catch((error: unknown) => {
      throw inResponsesTerms(error);
    });
    const output = io.output ? await io.output(result) : outputItems(result);
    const { status, incomplete_details } = statusOf(result.finishReason);
    const response = responseObject({ ...head, model: result.model.id }, spec, {
      status, output, usage: toUsage(result.usage), incomplete_details, completedAt: Math.floor(Date.now() / 1000),
    });
    if (spec.store) {
      // Bounded: the conversation was held to MAX_STORED_CONVERSATION_BYTES before the call, the answer by the output cap.
      const createdAt = new Date(head.createdAt * 1000);
      await this.store.responses.insert({
        id: head.id, org_id: principal.org.id, user_id: principal.user.id, environment: principal.environment,
        response: JSON.stringify(response), conversation: JSON.stringify([...conversation, ...outputMessages(output)]),
        created_at: createdAt.toISOString(), expires_at: new Date(createdAt.getTime() + RESPONSE_RETENTION_MS).toISOString(),
      });
    }
    return response;
  }

  async get(principal: Principal, id: string): Promise<ResponseObject> {
    const row = await this.store.responses.get({ orgId: principal.org.id, environment: principal.environment }, id, nowIso());
    if (!row) throw responseNotFound(id);
    return JSON.parse(row.response) as ResponseObject;
  }

  async delete(principal: Principal, id: string): Promise<{ id: string; object: 'response'; deleted: true }> {
    if (!await this.store.responses.delete({ orgId: principal.org.id, environment: principal.environment }, id, nowIso())) throw responseNotFound(id);
    return { id, object: 'response', deleted: true };
  }

  /** Deletes expired responses now and every RESPONSE_CLEANUP_INTERVAL_MS until stop(). */
  start(onError: (error: unknown) => void, onDeleted?: (count: number) => void): void {
    const run = () => { this.store.responses.deleteExpired(nowIso()).then((n) => { if (n) onDeleted?.(n); }, onError); };
    this.cleanup = setInterval(run, RESPONSE_CLEANUP_INTERVAL_MS);
    this.cleanup.unref();
    run();
  }

  stop(): void {
    clearInterval(this.cleanup);
  }
}

/** Every function_call_output answers a function call of the conversation (else the model would read an answer to nothing). */
function checkOutputs(conversation: readonly ChatMessage[], spec: ResponsesCallSpec): void {
  if (spec.outputs.length === 0) return;
  const calls = new Set(conversation.flatMap((m) => m.toolCalls?.map((c) => c.id) ?? []));
  for (const o of spec.outputs) {
    if (!calls.has(o.callId)) throw invalid(o.param, `"${o.callId}" answers no function call: no function_call item with that call_id in the input or the previous response`);
  }
}

/**
 * A refusal of the one call path names chat completions' fields (`response_format`, `messages[3]`, `max_tokens`);
 * the Responses API calls them `text.format`, `input` and `max_output_tokens`.
 */
export function inResponsesTerms(error: unknown): unknown {
  if (!(error instanceof AppError) || error.code !== 'validation_failed' || !error.extra.errors?.length) return error;
  const rename = (path: string) => path
    .replace(/^\/response_format(?=\/|$)/, '/text/format')
    .replace(/^\/messages(\/\d+)?(?=\/|$).*/, '/input')
    .replace(/^\/max_tokens(?=\/|$)/, '/max_output_tokens');
  const errors = error.extra.errors.map((e) => ({ ...e, path: rename(e.path) }));
  if (errors.every((e, i) => e.path === error.extra.errors![i]!.path)) return error;
  const message = error.message.replace(/\bresponse_format\b/g, 'text.format').replace(/\bmessages\[\d+\]/g, 'input').replace(/\bmax_tokens\b/g, 'max_output_tokens');
  return new AppError('validation_failed', message, { ...error.extra, errors });
}
