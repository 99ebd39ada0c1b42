import { AppError, ProviderError } from '../errors.js';
import { takesSuffix, type RegisteredModel } from './model-registry.js';
import { unsupportedField, type ChatMessage, type ConversationOptions } from './conversation.js';

/** A call with tools, tool messages or a response format (providers/conversation.ts). */
const usesConversation = (call: ConversationOptions & { messages?: readonly ChatMessage[] | undefined }): boolean =>
  call.tools !== undefined || call.toolChoice !== undefined || call.responseFormat !== undefined
  || (call.messages?.some((m) => m.role === 'tool' || m.toolCalls !== undefined) ?? false);

/** The field of `call` the model cannot honour (`tools`, `response_format`, `messages[i]`, …), if any. */
function refusedField(model: RegisteredModel, call: ConversationOptions & { messages?: readonly ChatMessage[] | undefined }): string | undefined {
  return unsupportedField(model.provider.conversation, { ...call, messages: call.messages ?? [] });
}

/**
 * The models that may serve a call, in order: the one asked for, then its fallbacks
 * (CODELOOM_MODEL_FALLBACKS). A fill-in-the-middle call (with a suffix) keeps only models whose
 * provider takes a suffix, and is a 400 when the one asked for cannot.
 */
export function candidatesFor(call: { model: RegisteredModel; suffix?: string | undefined; topK?: number | undefined; messages?: readonly ChatMessage[] | undefined } & ConversationOptions): RegisteredModel[] {
  let all = [call.model, ...(call.model.fallbacks ?? [])];
  // top_k (Anthropic's Messages API): only providers that take it; 400 naming it when the asked model cannot.
  if (call.topK !== undefined) {
    if (!call.model.provider.topK) {
      throw new AppError('validation_failed', `Model "${call.model.id}" cannot honour top_k; leave it out, or use an Anthropic model or the sandbox model.`, { errors: [{ path: '/top_k', message: `not supported by model ${call.model.id}` }] });
    }
    all = all.filter((m) => m.provider.topK);
  }
  // Tools, tool messages, a response format: only models that honour them; 400 naming the field when the asked one cannot.
  if (usesConversation(call)) {
    const field = refusedField(call.model, call);
    if (field) {
      const pointer = `/${field.replace(/\[(\d+)\]/g, '/$1').replace(/\./g, '/')}`;
      throw new AppError('validation_failed', `Model "${call.model.id}" cannot honour ${field}${field.startsWith('messages') ? ' (tool calls and tool results)' : ''}; use a model that supports tool calling and structured output (an OpenAI-compatible or Anthropic model, or the sandbox model).`, { errors: [{ path: pointer, message: `not supported by model ${call.model.id}` }] });
    }
    all = all.filter((m) => refusedField(m, call) === undefined);
  }
  if (call.suffix === undefined) return all;
  if (!takesSuffix(call.model)) {
    throw new AppError('validation_failed', `Model "${call.model.id}" does not support fill-in-the-middle (suffix); use the sandbox model or one listed in CODELOOM_OPENAI_FIM_MODELS.`, { errors: [{ path: '/suffix', message: `not supported by model ${call.model.id}` }] });
  }
  return all.filter(takesSuffix);
}

/**
 * A failure the next model may recover from: 429, 5xx, a timeout or a connection error. A 4xx from the
 * upstream (bad request, bad key) would fail the same way elsewhere, and a cancel is the caller's.
 */
export function shouldFallBack(error: unknown): boolean {
  if (!(error instanceof ProviderError)) return false; // a CancelledError never falls back
  const status = error.upstreamStatus;
  return status === undefined || status === 429 || status >= 500;
}

/**
 * Parses CODELOOM_MODEL_FALLBACKS, `model=fallback1|fallback2,other=…`, against the configured
 * model ids; every problem is listed (an unknown id, a model naming itself).
 */
export function parseFallbacks(value: string | undefined, known: readonly string[]): { fallbacks: Map<string, string[]>; problems: string[] } {
  const fallbacks = new Map<string, string[]>();
  const problems: string[] = [];
  for (const entry of (value ?? '').split(',').map((e) => e.trim()).filter(Boolean)) {
    const [model, list, extra] = entry.split('=').map((p) => p.trim());
    if (!model || !list || extra !== undefined) {
      problems.push(`CODELOOM_MODEL_FALLBACKS: "${entry}" is not model=fallback1|fallback2`);
      continue;
    }
    const names = list.split('|').map((n) => n.trim()).filter(Boolean);
    for (const n of [model, ...names]) if (!known.includes(n)) problems.push(`CODELOOM_MODEL_FALLBACKS: unknown model "${n}"; configured: ${known.join(', ')}`);
    if (names.includes(model)) problems.push(`CODELOOM_MODEL_FALLBACKS: "${model}" names itself as a fallback`);
    fallbacks.set(model, names);
  }
  return { fallbacks, problems };
}
