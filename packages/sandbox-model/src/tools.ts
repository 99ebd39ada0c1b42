import { engineerToolCall, isEngineerCall } from './engineer.js';
import { schemaInstance } from './schema-instance.js';
import type { SandboxCall, SandboxMessage, SandboxToolCall } from './types.js';

/**
 * The sandbox model's tool calling and structured output (deterministic, not AI):
 * - offered tools (and tool_choice not "none"), it calls the named tool, else the first, with arguments
 *   valid against its parameters schema (schema-instance.ts);
 * - given a tool result as the last message, it answers with text that quotes the result;
 * - asked for `json_schema`, it writes a document valid against the schema; `json_object`, a JSON object.
 */

/** FNV-1a, 32 bits: a short, stable fingerprint for ids. */
function fnv(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/** The tool the call names or, for "auto" / "required" / unset, the first offered; none for "none" or no tools. */
function chosenTool(call: SandboxCall) {
  const tools = call.tools ?? [];
  if (tools.length === 0 || call.toolChoice === 'none') return undefined;
  const choice = call.toolChoice;
  if (typeof choice === 'object') return tools.find((t) => t.name === choice.name);
  return tools[0];
}

/** The tool call the sandbox makes for this call, or undefined when it answers in text (no tools, "none", or a tool result to answer). */
export function sandboxToolCall(call: SandboxCall): SandboxToolCall | undefined {
  // In an engineer step it works through its fixed sequence (engineer.ts), tool result or not.
  if (isEngineerCall(call)) return engineerToolCall(call);
  if (call.messages.at(-1)?.role === 'tool') return undefined;
  const tool = chosenTool(call);
  if (!tool) return undefined;
  const args = JSON.stringify(schemaInstance(tool.parameters ?? { type: 'object', properties: {} }));
  const id = `call_sandbox${fnv(`${call.messages.length}\u0000${tool.name}\u0000${args}`)}`;
  return { id, name: tool.name, arguments: args };
}

const QUOTE_LIMIT = 2_000;

/** The text answer to a tool result (the last message): which tool returned what, for which request. */
export function toolResultAnswer(messages: readonly SandboxMessage[]): string {
  const last = messages.at(-1)!;
  const call = messages.flatMap((m) => m.toolCalls ?? []).find((c) => c.id === last.toolCallId);
  const result = last.content.length > QUOTE_LIMIT ? `${last.content.slice(0, QUOTE_LIMIT)}…` : last.content;
  const task = [...messages].reverse().find((m) => m.role === 'user')?.content.trim();
  const about = task ? ` That answers: "${task.length > 200 ? `${task.slice(0, 200)}…` : task}".` : '';
  return `The ${call ? `${call.name} tool` : 'tool'} returned: ${result}.${about}`;
}

/** The structured answer a response format asks for, or undefined for text. */
export function structuredAnswer(call: SandboxCall): string | undefined {
  const format = call.responseFormat;
  if (!format || format.type === 'text') return undefined;
  if (format.type === 'json_schema') return JSON.stringify(schemaInstance(format.schema ?? { type: 'object' }));
  const task = [...call.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  return JSON.stringify({ answer: 'sandbox', request: task.length > 200 ? `${task.slice(0, 200)}…` : task });
}
