/**
 * What one call to the sandbox model (a deterministic template model, not
 * AI) takes and gives. A server's chat message and call options fit these
 * shapes as they are; the package needs nothing else from its caller.
 */
export interface SandboxMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** An assistant turn's tool calls. */
  toolCalls?: ReadonlyArray<{ id: string; name: string; arguments: string }>;
  /** A tool result: the id of the call it answers. */
  toolCallId?: string;
}

/** A tool the caller offers: its arguments' JSON schema in `parameters`. */
export interface SandboxTool {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

/** A tool call the sandbox makes: `arguments` is JSON text valid against the tool's schema. */
export interface SandboxToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** What shapes the answer besides the messages; real models see the same in their prompt. */
export interface SandboxHints {
  language?: string;
  /** framework, database, styling, includeTests, … */
  context?: Record<string, string | number | boolean>;
  /** Agent type when called from a workflow step (planner, architect, coder, reviewer, tester, documenter). */
  agentType?: string;
}

export interface SandboxCall {
  messages: readonly SandboxMessage[];
  hints?: SandboxHints;
  /** Fill-in-the-middle: the text after the insertion point (the prompt is the last user message). */
  suffix?: string;
  /** The answer ends before the first stop sequence found. */
  stop?: readonly string[];
  /** Keep at most this many tokens; the answer then finishes with `length`. */
  maxTokens?: number;
  /** Offered tools: the sandbox calls the named one (toolChoice) or the first, unless toolChoice is "none". */
  tools?: readonly SandboxTool[];
  toolChoice?: 'none' | 'auto' | 'required' | { name: string };
  /** json_schema: the answer is a document valid against `schema`; json_object: a JSON object. */
  responseFormat?: { type: 'text' } | { type: 'json_object' } | { type: 'json_schema'; schema?: Record<string, unknown> };
}

export interface SandboxUsage {
  promptTokens: number;
  completionTokens: number;
}

/** The whole answer, cut into the token-sized pieces a stream sends. */
export interface SandboxAnswer {
  pieces: string[];
  usage: SandboxUsage;
  finishReason: 'stop' | 'length' | 'tool-calls';
  /** The stop sequence the answer ended at (finish reason `stop`), when one of the call's was found. */
  stopSequence?: string;
  /**
   * The tool call, when the answer is one (then `pieces` is empty): streamed as a first piece with its id and
   * name, then `argumentPieces`; each counts as one completion token. Cut by maxTokens like text.
   */
  toolCall?: SandboxToolCall & { argumentPieces: string[] };
}
