import type { ChatMessage, FinishReason, GenerateOutput, ModelCallOptions, ModelProvider, StreamPart, Usage } from '../provider.js';
import { ProviderError } from '../../errors.js';
import { cutAtStop, renderSandboxFillFor } from './sandbox-fill.js';
import { renderSandboxOutput } from './sandbox-output.js';
import { countTokens, tokenize } from './tokenize.js';

/**
 * The `sandbox` model: a deterministic template model, NOT AI. It reads the
 * prompt (what to build, what it is about), the language and the context
 * (framework, database, styling, includeTests) and writes a small runnable
 * project as Markdown, one ```<lang> <path> block per file; in a workflow it
 * answers in the form of its agent type (plan, design, code, review, tests,
 * README). Same input, same bytes out; no network, always available.
 */

/** How many pieces go out between turns of the event loop: no artificial delay, but aborts and slow readers get a say. */
const PIECES_PER_TURN = 64;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function throwIfCancelled(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new ProviderError('cancelled', 'The sandbox generation was cancelled.', false);
}

/** Tokens of every message, plus one for each message's role, as chat APIs count them. */
export function promptTokens(messages: readonly ChatMessage[]): number {
  return messages.reduce((n, m) => n + countTokens(m.content) + 1, 0);
}

interface Answer { pieces: string[]; usage: Usage; finishReason: FinishReason }

/** The answer cut into token-sized pieces; maxTokens keeps a prefix of whole pieces and reports `length`. */
function answer(options: ModelCallOptions): Answer {
  const full = options.suffix !== undefined ? renderSandboxFillFor(options) : renderSandboxOutput(options);
  const all = tokenize(cutAtStop(full, options.stop).text);
  const max = options.maxTokens;
  const cut = max !== undefined && all.length > max;
  const pieces = cut ? all.slice(0, Math.max(0, max)) : all;
  const prompt = promptTokens(options.messages) + (options.suffix !== undefined ? countTokens(options.suffix) : 0);
  return { pieces, usage: { promptTokens: prompt, completionTokens: pieces.length }, finishReason: cut ? 'length' : 'stop' };
}

async function* streamSandbox(options: ModelCallOptions): AsyncGenerator<StreamPart> {
  throwIfCancelled(options.signal);
  const { pieces, usage, finishReason } = answer(options);
  for (let i = 0; i < pieces.length; i++) {
    if (i > 0 && i % PIECES_PER_TURN === 0) await nextTurn();
    throwIfCancelled(options.signal);
    yield { type: 'text', text: pieces[i]! };
  }
  throwIfCancelled(options.signal);
  yield { type: 'finish', usage, finishReason };
}

export function createSandboxProvider(): ModelProvider {
  return {
    name: 'sandbox',
    fillInMiddle: true,
    async generate(options: ModelCallOptions): Promise<GenerateOutput> {
      throwIfCancelled(options.signal);
      const { pieces, usage, finishReason } = answer(options);
      throwIfCancelled(options.signal);
      return { text: pieces.join(''), usage, finishReason };
    },
    stream: streamSandbox,
    plannedUsage: (options: ModelCallOptions) => answer(options).usage,
  };
}
