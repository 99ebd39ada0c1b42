import { cutAtStop, renderSandboxFillFor } from './fill.js';
import { renderSandboxOutput } from './output.js';
import { countTokens, tokenize } from './tokenize.js';
import { sandboxToolCall, structuredAnswer, toolResultAnswer } from './tools.js';
import type { SandboxAnswer, SandboxCall, SandboxMessage } from './types.js';

/** Tokens of every message, plus one for each message's role, as chat APIs count them. */
export function promptTokens(messages: readonly SandboxMessage[]): number {
  let n = 0;
  for (const m of messages) {
    n += countTokens(m.content) + 1;
    if (m.toolCalls) for (const c of m.toolCalls) n += countTokens(c.name) + countTokens(c.arguments) + 1;
  }
  return n;
}

/** Prompt tokens of the offered tools and a response schema (their JSON text). */
function conversationTokens(call: SandboxCall): number {
  let n = 0;
  if (call.tools) for (const t of call.tools) n += countTokens(JSON.stringify(t));
  if (call.responseFormat?.type === 'json_schema') n += countTokens(JSON.stringify(call.responseFormat));
  return n;
}

/**
 * The sandbox model's answer to one call, cut into token-sized pieces: the
 * fill when the call has a suffix, else the rendered output; cut at the
 * first stop sequence; maxTokens keeps a prefix of whole pieces and reports
 * `length`. Same call, same pieces.
 */
export function sandboxAnswer(call: SandboxCall): SandboxAnswer {
  const conversation = call.tools !== undefined || call.responseFormat !== undefined || call.messages.at(-1)?.role === 'tool';
  const prompt = promptTokens(call.messages) + (call.suffix !== undefined ? countTokens(call.suffix) : 0) + (conversation ? conversationTokens(call) : 0);
  const max = call.maxTokens;
  const toolCall = conversation ? sandboxToolCall(call) : undefined;
  if (toolCall) {
    // One piece with the id and name, then the arguments' pieces.
    const args = tokenize(toolCall.arguments);
    const cut = max !== undefined && args.length + 1 > max;
    const argumentPieces = cut ? args.slice(0, Math.max(0, max - 1)) : args;
    const sent = cut && max < 1 ? 0 : argumentPieces.length + 1;
    return {
      pieces: [], usage: { promptTokens: prompt, completionTokens: sent }, finishReason: cut ? 'length' : 'tool-calls',
      ...(sent > 0 ? { toolCall: { ...toolCall, arguments: argumentPieces.join(''), argumentPieces } } : {}),
    };
  }
  const full = call.suffix !== undefined ? renderSandboxFillFor(call)
    : conversation ? (call.messages.at(-1)?.role === 'tool' && !structuredAnswer(call) ? toolResultAnswer(call.messages) : structuredAnswer(call) ?? renderSandboxOutput(call))
    : renderSandboxOutput(call);
  const stopped = cutAtStop(full, call.stop);
  const all = tokenize(stopped.text);
  const cut = max !== undefined && all.length > max;
  const pieces = cut ? all.slice(0, Math.max(0, max)) : all;
  return { pieces, usage: { promptTokens: prompt, completionTokens: pieces.length }, finishReason: cut ? 'length' : 'stop', ...(!cut && stopped.sequence !== undefined ? { stopSequence: stopped.sequence } : {}) };
}
