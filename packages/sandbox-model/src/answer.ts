import { cutAtStop, renderSandboxFillFor } from './fill.js';
import { renderSandboxOutput } from './output.js';
import { countTokens, tokenize } from './tokenize.js';
import type { SandboxAnswer, SandboxCall, SandboxMessage } from './types.js';

/** Tokens of every message, plus one for each message's role, as chat APIs count them. */
export function promptTokens(messages: readonly SandboxMessage[]): number {
  return messages.reduce((n, m) => n + countTokens(m.content) + 1, 0);
}

/**
 * The sandbox model's answer to one call, cut into token-sized pieces: the
 * fill when the call has a suffix, else the rendered output; cut at the
 * first stop sequence; maxTokens keeps a prefix of whole pieces and reports
 * `length`. Same call, same pieces.
 */
export function sandboxAnswer(call: SandboxCall): SandboxAnswer {
  const full = call.suffix !== undefined ? renderSandboxFillFor(call) : renderSandboxOutput(call);
  const all = tokenize(cutAtStop(full, call.stop).text);
  const max = call.maxTokens;
  const cut = max !== undefined && all.length > max;
  const pieces = cut ? all.slice(0, Math.max(0, max)) : all;
  const prompt = promptTokens(call.messages) + (call.suffix !== undefined ? countTokens(call.suffix) : 0);
  return { pieces, usage: { promptTokens: prompt, completionTokens: pieces.length }, finishReason: cut ? 'length' : 'stop' };
}
