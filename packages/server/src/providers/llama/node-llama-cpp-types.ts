/**
 * The slice of node-llama-cpp's API the llama provider uses, typed by hand.
 * node-llama-cpp is an optional dependency (about 85 MB with only the CPU
 * binary, 700+ MB with the GPU variants), so the build and typecheck must not
 * need its .d.ts files; these shapes match node-llama-cpp 3.x.
 */

export type Token = number;

export interface NlcLlamaText {
  readonly values: readonly unknown[];
  tokenize(tokenizer: unknown): Token[];
}

export type NlcChatHistoryItem =
  | { type: 'system'; text: string }
  | { type: 'user'; text: string }
  | { type: 'model'; response: string[] };

export interface NlcChatWrapper {
  readonly wrapperName: string;
  generateContextState(options: { chatHistory: NlcChatHistoryItem[] }): {
    contextText: NlcLlamaText;
    stopGenerationTriggers: NlcLlamaText[];
  };
}

export interface NlcSequence {
  readonly nextTokenIndex: number;
  adaptStateToTokens(tokens: Token[], allowShift?: boolean): Promise<void>;
  eraseContextTokenRanges(ranges: Array<{ start: number; end: number }>): Promise<void>;
  clearHistory(): Promise<void>;
  evaluate(tokens: Token[], options?: { temperature?: number }): AsyncGenerator<Token, void, void>;
}

export interface NlcContext {
  readonly contextSize: number;
  /** Threads the context decodes with when nothing else competes for them. */
  readonly idealThreads: number;
  getSequence(): NlcSequence;
  dispose(): Promise<void>;
}

export interface NlcModel {
  readonly tokenizer: unknown;
  readonly trainContextSize: number;
  detokenize(tokens: readonly Token[], specialTokens?: boolean, lastTokens?: readonly Token[]): string;
  createContext(options: { contextSize: number; threads: number; sequences: number }): Promise<NlcContext>;
  dispose(): Promise<void>;
}

export interface NlcLlama {
  readonly cpuMathCores: number;
  maxThreads: number;
  loadModel(options: { modelPath: string }): Promise<NlcModel>;
  dispose(): Promise<void>;
}

export interface NodeLlamaCpp {
  getLlama(options: {
    gpu: false;
    build: 'never';
    maxThreads: number;
    progressLogs: boolean;
    logLevel: 'disabled' | 'fatal' | 'error' | 'warn' | 'info' | 'log' | 'debug';
  }): Promise<NlcLlama>;
  resolveChatWrapper(model: NlcModel): NlcChatWrapper;
}
