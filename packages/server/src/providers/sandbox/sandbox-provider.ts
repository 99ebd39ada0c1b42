import { sandboxAnswer } from '@codeloom/sandbox-model';
import type { GenerateOutput, ModelCallOptions, ModelProvider, StreamPart } from '../provider.js';
import { CancelledError, ProviderError } from '../../errors.js';

/**
 * The `sandbox` model as a provider: a deterministic template model, NOT AI
 * (@codeloom/sandbox-model writes the answer; see its README). This adapter
 * adds what a provider owes its caller: cancellation through the
 * AbortSignal, and a stream that yields to the event loop. Same input, same
 * bytes out; no network, always available.
 */

/** How many pieces go out between turns of the event loop: no artificial delay, but aborts and slow readers get a say. */
const PIECES_PER_TURN = 64;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function throwIfCancelled(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new CancelledError('The sandbox generation was cancelled.');
}

async function* streamSandbox(options: ModelCallOptions): AsyncGenerator<StreamPart> {
  throwIfCancelled(options.signal);
  const { pieces, usage, finishReason, toolCall, stopSequence } = sandboxAnswer(options);
  for (let i = 0; i < pieces.length; i++) {
    if (i > 0 && i % PIECES_PER_TURN === 0) await nextTurn();
    throwIfCancelled(options.signal);
    yield { type: 'text', text: pieces[i]! };
  }
  if (toolCall) {
    yield { type: 'tool-call', index: 0, id: toolCall.id, name: toolCall.name, arguments: '' };
    for (let i = 0; i < toolCall.argumentPieces.length; i++) {
      if (i > 0 && i % PIECES_PER_TURN === 0) await nextTurn();
      throwIfCancelled(options.signal);
      yield { type: 'tool-call', index: 0, arguments: toolCall.argumentPieces[i]! };
    }
  }
  throwIfCancelled(options.signal);
  yield { type: 'finish', usage, finishReason, ...(stopSequence !== undefined ? { stopSequence } : {}) };
}

export function createSandboxProvider(): ModelProvider {
  return {
    name: 'sandbox',
    fillInMiddle: true,
    // Deterministic: every sampling setting (temperature, top_p, top_k) gives the same answer, so each is honoured.
    topK: true,
    conversation: { tools: true, responseFormats: ['json_object', 'json_schema'] },
    async generate(options: ModelCallOptions): Promise<GenerateOutput> {
      throwIfCancelled(options.signal);
      const { pieces, usage, finishReason, toolCall } = sandboxAnswer(options);
      throwIfCancelled(options.signal);
      return { text: pieces.join(''), usage, finishReason, ...(toolCall ? { toolCalls: [{ id: toolCall.id, name: toolCall.name, arguments: toolCall.arguments }] } : {}) };
    },
    stream: streamSandbox,
    plannedUsage: (options: ModelCallOptions) => sandboxAnswer(options).usage,
  };
}
