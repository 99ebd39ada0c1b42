/**
 * What one call to the sandbox model (a deterministic template model, not
 * AI) takes and gives. A server's chat message and call options fit these
 * shapes as they are; the package needs nothing else from its caller.
 */
export interface SandboxMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
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
}

export interface SandboxUsage {
  promptTokens: number;
  completionTokens: number;
}

/** The whole answer, cut into the token-sized pieces a stream sends. */
export interface SandboxAnswer {
  pieces: string[];
  usage: SandboxUsage;
  finishReason: 'stop' | 'length';
}
