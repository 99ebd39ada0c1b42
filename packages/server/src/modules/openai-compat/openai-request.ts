import type { ChatCompletionBody, CompletionBody } from '@codeloom/protocol';
import type { ChatMessage } from '../../providers/provider.js';

/** What one OpenAI-style request asks of a model, in Codeloom's terms. */
export interface OpenAICallSpec {
  model: string | undefined;
  messages: ChatMessage[];
  maxTokens: number | undefined;
  temperature: number | undefined;
  topP: number | undefined;
  stop: string[] | undefined;
  suffix: string | undefined;
  stream: boolean;
  includeUsage: boolean;
}

const textOf = (content: ChatCompletionBody['messages'][number]['content']): string =>
  typeof content === 'string' ? content : content === null ? '' : content.map((p) => p.text).join('');

const orUndefined = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v);

function common(body: ChatCompletionBody | CompletionBody) {
  return {
    model: body.model,
    temperature: orUndefined(body.temperature),
    topP: orUndefined(body.top_p),
    stop: body.stop == null ? undefined : typeof body.stop === 'string' ? [body.stop] : body.stop,
    stream: body.stream === true,
    includeUsage: body.stream_options?.include_usage === true,
  };
}

/** Chat: `developer` is the newer name of `system`; text parts are joined into one string. */
export function fromChatBody(body: ChatCompletionBody): OpenAICallSpec {
  return {
    ...common(body),
    messages: body.messages.map((m) => ({ role: m.role === 'developer' ? 'system' : m.role, content: textOf(m.content) })),
    maxTokens: orUndefined(body.max_completion_tokens) ?? orUndefined(body.max_tokens),
    suffix: undefined,
  };
}

/** Completions: the prompt is one user message; a suffix makes it fill-in-the-middle. */
export function fromCompletionBody(body: CompletionBody): OpenAICallSpec {
  const prompt = typeof body.prompt === 'string' ? body.prompt : body.prompt[0]!;
  return { ...common(body), messages: [{ role: 'user', content: prompt }], maxTokens: orUndefined(body.max_tokens), suffix: orUndefined(body.suffix) };
}

/** OpenAI's finish_reason for ours. */
export function toFinishReason(reason: string): string {
  return reason === 'length' ? 'length' : reason === 'content-filter' ? 'content_filter' : 'stop';
}
