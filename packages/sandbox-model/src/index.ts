/**
 * @codeloom/sandbox-model: the `sandbox` model, a deterministic template
 * model (NOT AI). It reads the prompt (what to build, what it is about), the
 * language and the context (framework, database, styling, includeTests) and
 * writes a small runnable project as Markdown, one ```<lang> <path> block
 * per file; in a workflow it answers in the form of its agent type (plan,
 * design, code, review, tests, README). Same input, same bytes out; no
 * network, no clock, no randomness. Pure functions only: streaming,
 * cancellation and errors belong to the caller (the server's provider).
 */
export type { SandboxAnswer, SandboxCall, SandboxHints, SandboxMessage, SandboxTool, SandboxToolCall, SandboxUsage } from './types.js';
export { schemaInstance, type Schema } from './schema-instance.js';
export { sandboxToolCall, structuredAnswer, toolResultAnswer } from './tools.js';
export { engineerToolCall, isEngineerCall } from './engineer.js';
export { promptTokens, sandboxAnswer } from './answer.js';
export { renderSandboxOutput } from './output.js';
export { cutAtStop, renderSandboxFill, renderSandboxFillFor } from './fill.js';
export { countTokens, tokenize } from './tokenize.js';
export { coderOutputs, fencedPaths, readConversation, type Conversation, type StepOutput } from './conversation.js';
export { REVIEW_MARKER, lastReviewAskedForChanges, requestsChanges, reviewText } from './review.js';
export { analyzePrompt, stripMarkers, type NameForms, type ProjectKind, type PromptAnalysis } from './prompt-analysis.js';
export { SANDBOX_LANGUAGES, inferLanguage, resolveSandboxLanguage, type SandboxLanguage } from './sandbox-languages.js';
export type { GenerationSpec, SandboxFile } from './project-files.js';
