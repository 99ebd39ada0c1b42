/**
 * ModelProvider for a GGUF model run in-process by llama.cpp through
 * node-llama-cpp (model id `local`, enabled by CODELOOM_LLAMA_MODEL).
 *
 * node-llama-cpp is an optional dependency loaded with a dynamic import, so
 * the server builds and runs without it; `node scripts/install-llama.mjs`
 * installs it (CPU binary only) from the npm registry.
 *
 * Generation pulls tokens one at a time from a context sequence instead of
 * using LlamaChat's callbacks: the next token is decoded only when the
 * consumer asks for more text, which is the backpressure a slow stream reader
 * needs, and the token counts and finish reasons are exact. The model's chat
 * template is still applied through node-llama-cpp's chat wrappers.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import type { ChatMessage, FinishReason, GenerateOutput, ModelCallOptions, ModelProvider, StreamPart, Usage } from '../provider.js';
import { CancelledError, ProviderError } from '../../errors.js';
import type { NlcChatHistoryItem, NlcChatWrapper, NlcContext, NlcLlama, NlcModel, NlcSequence, NodeLlamaCpp, Token } from './node-llama-cpp-types.js';
import { TokenText } from './token-text.js';

export interface LlamaProviderOptions {
  /** Path of a GGUF model file. */
  modelPath: string;
  /** CPU threads for decoding; defaults to {@link defaultThreads}. */
  threads?: number;
  /** Context window in tokens; defaults to the model's training context, at most 4096. */
  contextSize?: number;
}

export interface LlamaProvider extends ModelProvider {
  readonly name: 'llama';
  /** Threads the context decodes with. */
  readonly threads: number;
  readonly contextSize: number;
}

export const LLAMA_NOT_INSTALLED =
  'CODELOOM_LLAMA_MODEL is set but node-llama-cpp is not installed: run `node scripts/install-llama.mjs`';

const PACKAGE = 'node-llama-cpp';
const DEFAULT_MAX_CONTEXT = 4096;
/** How long close() lets in-flight calls wind down before disposing under them. */
const CLOSE_GRACE_MS = 5000;

/** node-llama-cpp, or undefined when it is not installed; other load failures are thrown. */
export async function loadNodeLlamaCpp(): Promise<NodeLlamaCpp | undefined> {
  try {
    // A variable specifier keeps TypeScript from resolving the optional package at build time.
    const specifier: string = PACKAGE;
    return (await import(specifier)) as NodeLlamaCpp;
  } catch (err) {
    const e = err as { code?: string; message?: string };
    if (e.code === 'ERR_MODULE_NOT_FOUND' && e.message?.includes(`'${PACKAGE}'`)) return undefined;
    throw err;
  }
}

/** CPU limit of a cgroup v2 quota ("200000 100000" → 2), which os.availableParallelism() ignores. */
function cgroupCpuLimit(): number | undefined {
  try {
    const [quota, period] = readFileSync('/sys/fs/cgroup/cpu.max', 'utf8').trim().split(/\s+/);
    if (!quota || quota === 'max' || !period) return undefined;
    return Math.max(1, Math.floor(Number(quota) / Number(period)));
  } catch {
    return undefined;
  }
}

/** Decoding one token at a time is memory-bound: past this, more threads mostly add synchronisation. */
const MAX_DEFAULT_THREADS = 16;

/**
 * Threads for the cores this process can really use: the smallest of the
 * scheduler's CPUs, the cgroup quota and llama.cpp's count of math cores
 * (physical cores, no hyper-threads), less one core left to the gateway's
 * event loop. llama.cpp's threads spin while they wait for each other, so
 * they must never outnumber free cores: node-llama-cpp's own default of
 * max(cores, 4) decoded about 300× slower than 1 thread on a 2-core machine,
 * and there even 2 threads were 1.1–13× slower than 1 (a 180 MB model / the
 * tiny test model) whenever anything else was running.
 */
export function defaultThreads(cpuMathCores?: number): number {
  const limits = [os.availableParallelism(), cgroupCpuLimit(), cpuMathCores].filter(
    (n): n is number => typeof n === 'number' && Number.isFinite(n) && n > 0,
  );
  return Math.max(1, Math.min(Math.min(...limits) - 1, MAX_DEFAULT_THREADS));
}

/** One caller at a time on the context sequence: its KV cache holds one conversation. */
class Queue {
  private tail: Promise<void> = Promise.resolve();

  async acquire(signal: AbortSignal): Promise<() => void> {
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const previous = this.tail;
    this.tail = previous.then(() => mine);
    try {
      await abortable(previous, signal);
    } catch (err) {
      void previous.then(release); // keep the chain moving for those queued behind
      throw err;
    }
    return release;
  }

  /** Resolves once everyone queued so far is done. */
  idle(): Promise<void> {
    return this.tail;
  }
}

function cancelled(): CancelledError {
  return new CancelledError('the request was cancelled');
}

/** `promise`, or a CancelledError as soon as `signal` aborts. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(cancelled());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(cancelled());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => { signal.removeEventListener('abort', onAbort); resolve(value); },
      (err: unknown) => { signal.removeEventListener('abort', onAbort); reject(err); },
    );
  });
}

function toHistory(messages: ChatMessage[]): NlcChatHistoryItem[] {
  const history: NlcChatHistoryItem[] = messages.map((m) =>
    // No tool messages arrive here (the provider declares no tool support, so candidatesFor refuses them with a 400).
    m.role === 'assistant' ? { type: 'model', response: [m.content] } : { type: m.role === 'system' ? 'system' : 'user', text: m.content },
  );
  // A trailing assistant message is a prefill the model continues; otherwise open a new turn.
  if (history.at(-1)?.type !== 'model') history.push({ type: 'model', response: [] });
  return history;
}

interface Prompt {
  tokens: Token[];
  stopTexts: string[];
  stopTokens: Set<Token>;
}

function renderPrompt(model: NlcModel, wrapper: NlcChatWrapper, messages: ChatMessage[]): Prompt {
  const state = wrapper.generateContextState({ chatHistory: toHistory(messages) });
  const stopTexts: string[] = [];
  const stopTokens = new Set<Token>();
  for (const trigger of state.stopGenerationTriggers) {
    if (trigger.values.every((v) => typeof v === 'string')) {
      const text = trigger.values.join('');
      if (text) stopTexts.push(text);
    } else {
      // Special-token triggers (end-of-turn markers); most are also end-of-generation tokens.
      const tokens = trigger.tokenize(model.tokenizer);
      if (tokens.length === 1) stopTokens.add(tokens[0]!);
    }
  }
  return { tokens: state.contextText.tokenize(model.tokenizer), stopTexts, stopTokens };
}

/** Keeps the cached prefix of the previous call and leaves at least one prompt token to evaluate (it yields the first logits). */
async function alignSequence(sequence: NlcSequence, tokens: Token[]): Promise<Token[]> {
  try {
    await sequence.adaptStateToTokens(tokens, false);
    if (sequence.nextTokenIndex >= tokens.length) {
      await sequence.eraseContextTokenRanges([{ start: tokens.length - 1, end: sequence.nextTokenIndex }]);
    }
  } catch {
    await sequence.clearHistory(); // models whose state cannot be trimmed (recurrent ones) start over
  }
  return tokens.slice(sequence.nextTokenIndex);
}

type RunResult = { usage: Usage; finishReason: FinishReason };

export async function createLlamaProvider(options: LlamaProviderOptions): Promise<LlamaProvider> {
  const lib = await loadNodeLlamaCpp();
  if (!lib) throw new Error(LLAMA_NOT_INSTALLED);

  // build: 'never' — use the prebuilt binary package; never clone and compile llama.cpp at run time.
  const llama: NlcLlama = await lib.getLlama({
    gpu: false, build: 'never', maxThreads: options.threads ?? defaultThreads(), progressLogs: false, logLevel: 'error',
  });
  let model: NlcModel | undefined;
  let context: NlcContext;
  const threads = Math.max(1, Math.floor(options.threads ?? defaultThreads(llama.cpuMathCores)));
  try {
    llama.maxThreads = threads; // the context's default and upper bound
    model = await llama.loadModel({ modelPath: options.modelPath });
    const contextSize = options.contextSize ?? Math.min(model.trainContextSize || DEFAULT_MAX_CONTEXT, DEFAULT_MAX_CONTEXT);
    context = await model.createContext({ contextSize, threads, sequences: 1 });
  } catch (err) {
    await model?.dispose().catch(() => undefined);
    await llama.dispose().catch(() => undefined);
    throw new Error(`could not load the llama model ${options.modelPath}: ${(err as Error).message}`, { cause: err });
  }
  const loaded: NlcModel = model;
  const sequence = context.getSequence();
  const wrapper = lib.resolveChatWrapper(loaded);
  const queue = new Queue();
  const closing = new AbortController();
  let closed = false;

  async function* run(call: ModelCallOptions): AsyncGenerator<string, RunResult, undefined> {
    if (closed) throw new ProviderError('service_unavailable', 'the local model is shut down', false);
    const signal = call.signal ? AbortSignal.any([call.signal, closing.signal]) : closing.signal;
    const release = await queue.acquire(signal);
    let aligning: Promise<unknown> | undefined;
    let evaluation: AsyncGenerator<Token, void, void> | undefined;
    try {
      const prompt = renderPrompt(loaded, wrapper, call.messages);
      const room = context.contextSize - prompt.tokens.length;
      if (room < 1) {
        throw new ProviderError('upstream_error', `the prompt is ${prompt.tokens.length} tokens; the local model's context holds ${context.contextSize}`, false);
      }
      const limit = Math.max(0, Math.min(call.maxTokens ?? room, room));
      aligning = alignSequence(sequence, prompt.tokens);
      const input = (await abortable(aligning, signal)) as Token[];
      // The chat template's stop markers and the caller's stop sequences end the answer alike (neither is part of it).
      const stopTexts = [...prompt.stopTexts, ...(call.stop ?? []).filter((s) => s !== '')];
      const text = new TokenText((tokens, last) => loaded.detokenize(tokens, false, last), stopTexts, prompt.tokens);
      let completionTokens = 0;
      let finishReason: FinishReason = 'length';
      if (limit > 0) evaluation = sequence.evaluate(input, { temperature: Math.max(0, call.temperature ?? 0) });
      while (evaluation && completionTokens < limit) {
        const step = await abortable(evaluation.next(), signal);
        if (step.done) { finishReason = 'stop'; break; } // end-of-generation token
        completionTokens++;
        if (prompt.stopTokens.has(step.value)) { finishReason = 'stop'; break; }
        const piece = text.push(step.value);
        if (piece.text) yield piece.text;
        if (piece.stop) { finishReason = 'stop'; break; }
      }
      const rest = text.flush();
      if (rest) yield rest;
      return { usage: { promptTokens: prompt.tokens.length, completionTokens }, finishReason };
    } catch (err) {
      if (err instanceof ProviderError) throw err;
      if (signal.aborted) throw cancelled();
      throw new ProviderError('upstream_error', `the local model failed: ${(err as Error).message}`, false);
    } finally {
      // The caller returns at once (abort must be prompt), but the next caller waits until
      // the token being decoded is finished and the sequence is free again.
      const busy = evaluation;
      void (async () => {
        await aligning?.catch(() => undefined);
        await busy?.return();
      })().catch(() => undefined).finally(release);
    }
  }

  const provider: LlamaProvider = {
    name: 'llama',
    threads: context.idealThreads || threads,
    contextSize: context.contextSize,

    async generate(call: ModelCallOptions): Promise<GenerateOutput> {
      const it = run(call);
      let text = '';
      for (;;) {
        const step = await it.next();
        if (step.done) return { text, ...step.value };
        text += step.value;
      }
    },

    async *stream(call: ModelCallOptions): AsyncIterable<StreamPart> {
      const it = run(call);
      let done = false;
      try {
        for (;;) {
          const step = await it.next();
          if (step.done) {
            done = true;
            yield { type: 'finish', ...step.value };
            return;
          }
          yield { type: 'text', text: step.value };
        }
      } finally {
        // A consumer that stops early must still free the sequence.
        if (!done) await it.return(undefined as never);
      }
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      closing.abort();
      await Promise.race([queue.idle(), new Promise((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref())]);
      await context.dispose().catch(() => undefined);
      await loaded.dispose().catch(() => undefined);
      await llama.dispose().catch(() => undefined);
    },
  };
  return provider;
}
