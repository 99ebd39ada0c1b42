import { ProviderError } from '../../errors.js';
import type { EmbeddingProvider } from '../embeddings.js';
import { runGenerate, type HttpProviderOptions } from '../http/upstream-http.js';
import { openAIEndpoint } from './openai-provider.js';

/** The embeddings endpoint next to chat completions (`{base}/embeddings`). */
export function openAIEmbeddingsEndpoint(baseUrl: string): string {
  return openAIEndpoint(baseUrl).replace(/\/chat\/completions$/, '/embeddings');
}

/**
 * Embeddings from an OpenAI-compatible server (OpenAI, vLLM, Ollama, llama.cpp server, TEI behind an OpenAI
 * facade): the inputs passed on unchanged, vectors always asked as floats (Codeloom encodes them as its caller
 * asked), with the same retries, timeouts and error mapping as chat calls.
 */
export function createOpenAIEmbeddings(options: HttpProviderOptions): EmbeddingProvider {
  const url = openAIEmbeddingsEndpoint(options.baseUrl);
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  return {
    embed(o) {
      const body: Record<string, unknown> = { model: o.model, input: o.input, encoding_format: 'float' };
      if (o.dimensions !== undefined) body.dimensions = o.dimensions;
      return runGenerate({ options, signal: o.signal, spec: { url, headers, body } }, (json) => parseEmbeddings(json, o.input.length));
    },
  };
}

/** An OpenAI embeddings answer: `data[].embedding` (floats) by `index`, `usage.prompt_tokens`. Anything else is a malformed answer. */
export function parseEmbeddings(json: unknown, count: number): { vectors: number[][]; promptTokens?: number } {
  const bad = (why: string) => new ProviderError('upstream_error', `the provider sent a malformed embeddings answer (${why})`, false);
  const data = (json as { data?: unknown })?.data;
  if (!Array.isArray(data) || data.length !== count) throw bad(`expected ${count} embeddings`);
  const vectors: number[][] = new Array(count);
  for (const [i, item] of data.entries()) {
    const e = item as { index?: unknown; embedding?: unknown };
    const index = typeof e.index === 'number' ? e.index : i;
    if (!Array.isArray(e.embedding) || !e.embedding.every((x) => typeof x === 'number') || index < 0 || index >= count || vectors[index]) throw bad(`item ${i}`);
    vectors[index] = e.embedding as number[];
  }
  const tokens = (json as { usage?: { prompt_tokens?: unknown } }).usage?.prompt_tokens;
  return { vectors, ...(typeof tokens === 'number' && Number.isFinite(tokens) ? { promptTokens: tokens } : {}) };
}
