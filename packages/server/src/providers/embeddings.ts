/** Text embeddings (POST /openai/v1/embeddings): what a model that offers them is asked, and what it answers. */
export interface EmbedOptions {
  /** The upstream's model id. */
  model: string;
  /** Texts, or pre-tokenized inputs (token ids) as OpenAI's API takes them. */
  input: Array<string | number[]>;
  /** Output dimensions, for models that can shorten their vectors (OpenAI's text-embedding-3). */
  dimensions?: number | undefined;
  signal?: AbortSignal | undefined;
}

export interface EmbedOutput {
  /** One vector per input, in order. */
  vectors: number[][];
  /** Prompt tokens the provider reported; undefined when it reported none. */
  promptTokens?: number | undefined;
}

export interface EmbeddingProvider {
  embed(options: EmbedOptions): Promise<EmbedOutput>;
  /** The exact tokens an input will count, for a provider that knows in advance (the sandbox). */
  plannedTokens?(input: string | number[]): number;
}
