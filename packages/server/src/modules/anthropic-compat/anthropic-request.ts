import { MAX_JSON_SCHEMA_BYTES } from '@codeloom/protocol';
import { AppError } from '../../errors.js';
import type { ChatMessage, ToolCall } from '../../providers/provider.js';
import type { ConversationOptions, ToolDefinition } from '../../providers/conversation.js';
import type { ChatCallSpec } from '../generate/chat-call.js';
import type { AnthropicCountTokensBody, AnthropicMessagesBody } from './anthropic-schemas.js';

/**
 * The Messages API's inbound codec (docs/decisions/0006-conversation-model.md): an Anthropic request as the
 * internal conversation. `system` (a string or text blocks) is the first message; text blocks are joined;
 * an assistant's `tool_use` blocks are its tool calls (`input` serialised once, as JSON text); a user's
 * `tool_result` blocks are tool messages (before the user's own text, as Anthropic orders them). What
 * Codeloom cannot carry (images, documents, server tools, extended thinking) is a 400 naming it.
 */
export interface AnthropicCallSpec extends ChatCallSpec {
  model: string;
  stream: boolean;
}

type Block = { type: string; [key: string]: unknown };

/** A 400 naming the parameter as Anthropic does (`messages.1.content.0.type: …`). */
export function invalid(param: string, message: string): AppError {
  return new AppError('validation_failed', `${param}: ${message}`, { errors: [{ path: `/${param.replace(/\./g, '/')}`, message }] });
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Why a block type is refused (those Codeloom's conversation model cannot carry). */
function unsupportedBlock(type: string): string {
  if (type === 'image' || type === 'document') return `${type} blocks are not supported: Codeloom carries text, tool_use and tool_result blocks`;
  return `"${type}" blocks are not supported: Codeloom carries text, tool_use and tool_result blocks`;
}

/**
 * The text of a text block (`citations` and `cache_control` are hints Codeloom does not act on). `param` names
 * the block, made only for an error (a long conversation has hundreds of blocks and is read on every call).
 */
function textOf(block: Block, param: () => string): string {
  if (typeof block.text !== 'string') throw invalid(`${param()}.text`, 'Field required (a string)');
  return block.text;
}

/** `system`: a string, or text blocks joined by blank lines. */
export function systemText(system: AnthropicMessagesBody['system']): string | undefined {
  if (system === undefined) return undefined;
  if (typeof system === 'string') return system;
  return system.map((b, i) => {
    if (b.type !== 'text') throw invalid(`system.${i}.type`, `must be "text" (${unsupportedBlock(b.type)})`);
    return textOf(b, () => `system.${i}`);
  }).join('\n\n');
}

/** A tool result's content: a string, or text blocks (joined); absent is empty. */
function toolResultText(content: unknown, param: () => string): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalid(param(), 'must be a string or an array of text blocks');
  let text = '';
  for (let k = 0; k < content.length; k++) {
    const b: unknown = content[k];
    if (!isObject(b) || typeof b.type !== 'string') throw invalid(`${param()}.${k}`, 'must be a content block (an object with a "type")');
    if (b.type !== 'text') throw invalid(`${param()}.${k}.type`, `must be "text" (${unsupportedBlock(b.type)})`);
    text += textOf(b as Block, () => `${param()}.${k}`);
  }
  return text;
}

/** Anthropic's messages as ours. */
export function toMessages(messages: AnthropicMessagesBody['messages']): ChatMessage[] {
  const out: ChatMessage[] = [];
  messages.forEach((m, i) => {
    if (typeof m.content === 'string') {
      out.push({ role: m.role, content: m.content });
      return;
    }
    const texts: string[] = [];
    const calls: ToolCall[] = [];
    const results: ChatMessage[] = [];
    m.content.forEach((b, j) => {
      const param = () => `messages.${i}.content.${j}`;
      switch (b.type) {
        case 'text':
          texts.push(textOf(b, param));
          return;
        case 'tool_use': {
          if (m.role !== 'assistant') throw invalid(`${param()}.type`, 'tool_use blocks are only allowed in assistant messages');
          if (typeof b.id !== 'string' || b.id === '') throw invalid(`${param()}.id`, 'Field required (a string)');
          if (typeof b.name !== 'string' || b.name === '') throw invalid(`${param()}.name`, 'Field required (a string)');
          if (!isObject(b.input)) throw invalid(`${param()}.input`, 'must be an object');
          calls.push({ id: b.id, name: b.name, arguments: JSON.stringify(b.input) });
          return;
        }
        case 'tool_result': {
          if (m.role !== 'user') throw invalid(`${param()}.type`, 'tool_result blocks are only allowed in user messages');
          if (typeof b.tool_use_id !== 'string' || b.tool_use_id === '') throw invalid(`${param()}.tool_use_id`, 'Field required (a string)');
          if (b.is_error !== undefined && typeof b.is_error !== 'boolean') throw invalid(`${param()}.is_error`, 'must be a boolean');
          const result: ChatMessage = { role: 'tool', content: toolResultText(b.content, () => `${param()}.content`), toolCallId: b.tool_use_id };
          if (b.is_error === true) result.isError = true;
          results.push(result);
          return;
        }
        case 'thinking':
        case 'redacted_thinking':
          // An earlier turn's thinking: Anthropic itself leaves it out of the context of later turns.
          if (m.role === 'assistant') return;
          throw invalid(`${param()}.type`, `${b.type} blocks are only allowed in assistant messages`);
        default:
          throw invalid(`${param()}.type`, unsupportedBlock(b.type));
      }
    });
    if (m.role === 'assistant') {
      const message: ChatMessage = { role: 'assistant', content: texts.join('') };
      if (calls.length) message.toolCalls = calls;
      out.push(message);
      return;
    }
    // Tool results first (they answer the previous assistant turn), then what the user wrote with them.
    out.push(...results);
    if (texts.length || !results.length) out.push({ role: 'user', content: texts.join('') });
  });
  return out;
}

/** tools and tool_choice in our terms; only what the request set. */
export function toConversation(body: Pick<AnthropicMessagesBody, 'tools' | 'tool_choice'>): ConversationOptions {
  const out: ConversationOptions = {};
  if (body.tools?.length) {
    const names = new Set<string>();
    out.tools = body.tools.map((t, i): ToolDefinition => {
      if (t.type != null && t.type !== 'custom') throw invalid(`tools.${i}.type`, `"${t.type}" is an Anthropic server tool, which Codeloom does not run; offer custom tools (name, description, input_schema)`);
      if (names.has(t.name)) throw invalid(`tools.${i}.name`, `Tool names must be unique ("${t.name}" repeats)`);
      names.add(t.name);
      if (t.input_schema === undefined) throw invalid(`tools.${i}.input_schema`, 'Field required');
      if (t.input_schema.type !== 'object') throw invalid(`tools.${i}.input_schema.type`, 'must be "object"');
      if (Buffer.byteLength(JSON.stringify(t.input_schema), 'utf8') > MAX_JSON_SCHEMA_BYTES) throw invalid(`tools.${i}.input_schema`, `must be a JSON schema of at most ${MAX_JSON_SCHEMA_BYTES} bytes`);
      const tool: ToolDefinition = { name: t.name, parameters: t.input_schema };
      if (t.description !== undefined) tool.description = t.description;
      return tool;
    });
  }
  const choice = body.tool_choice;
  if (choice) {
    if ((choice.type === 'any' || choice.type === 'tool') && !out.tools) throw invalid('tool_choice.type', `is "${choice.type}" but the request has no tools`);
    if (choice.type === 'tool') {
      if (choice.name === undefined) throw invalid('tool_choice.name', 'Field required when tool_choice.type is "tool"');
      if (!out.tools!.some((t) => t.name === choice.name)) throw invalid('tool_choice.name', `names "${choice.name}", which is not one of the request's tools`);
      out.toolChoice = { name: choice.name };
    } else if (out.tools) {
      out.toolChoice = choice.type === 'any' ? 'required' : choice.type;
    }
    if (choice.disable_parallel_tool_use === true && out.tools) out.parallelToolCalls = false;
  }
  return out;
}

function checkThinking(thinking: AnthropicMessagesBody['thinking']): void {
  if (thinking && thinking.type !== 'disabled') throw invalid('thinking.type', 'extended thinking is not supported by Codeloom; leave `thinking` out (or send {"type": "disabled"})');
}

/** The conversation a request describes (the system prompt first), shared by messages and count_tokens. */
function conversationOf(body: AnthropicCountTokensBody): Pick<AnthropicCallSpec, 'model' | 'messages' | 'conversation'> {
  checkThinking(body.thinking);
  const system = systemText(body.system);
  const messages = toMessages(body.messages);
  return {
    model: body.model,
    messages: system !== undefined && system !== '' ? [{ role: 'system', content: system }, ...messages] : messages,
    conversation: body.tools !== undefined || body.tool_choice !== undefined ? toConversation(body) : NO_CONVERSATION,
  };
}

export function fromMessagesBody(body: AnthropicMessagesBody): AnthropicCallSpec {
  return {
    ...conversationOf(body),
    maxTokens: body.max_tokens,
    temperature: body.temperature,
    topP: body.top_p,
    topK: body.top_k,
    stop: body.stop_sequences?.length ? body.stop_sequences : undefined,
    stream: body.stream === true,
  };
}

export function fromCountTokensBody(body: AnthropicCountTokensBody): ChatCallSpec {
  return conversationOf(body);
}

const NO_CONVERSATION: ConversationOptions = Object.freeze({});
