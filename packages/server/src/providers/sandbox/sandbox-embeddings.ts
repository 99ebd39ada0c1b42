import { createHash } from 'node:crypto';
import type { EmbeddingProvider } from '../embeddings.js';

/** Dimensions of the sandbox model's vectors unless a request asks for others. */
export const SANDBOX_EMBEDDING_DIMENSIONS = 256;

/**
 * The sandbox model's embeddings: deterministic and offline, made by feature hashing — every lower-cased word
 * and character trigram of a text adds ±1 at a position its hash chooses, and the vector is scaled to unit
 * length. Texts that share words and spellings point the same way, so similarity search can be tried and
 * tested without a model; a token-id input hashes its ids. It counts one token per word (or id), at least one.
 */
export function createSandboxEmbeddings(): EmbeddingProvider {
  return {
    async embed(o) {
      const dims = o.dimensions ?? SANDBOX_EMBEDDING_DIMENSIONS;
      return { vectors: o.input.map((input) => embedOne(input, dims)), promptTokens: o.input.reduce((n, input) => n + tokensOf(input), 0) };
    },
    plannedTokens: tokensOf,
  };
}

function tokensOf(input: string | number[]): number {
  return Math.max(1, typeof input === 'string' ? words(input).length : input.length);
}

const words = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];

function embedOne(input: string | number[], dims: number): number[] {
  const v = new Float64Array(dims);
  const add = (feature: string, weight: number) => {
    const h = createHash('sha256').update(feature).digest();
    v[h.readUInt32LE(0) % dims]! += (h[4]! & 1 ? 1 : -1) * weight;
  };
  if (typeof input === 'string') {
    for (const w of words(input)) {
      add(`w:${w}`, 1);
      const padded = ` ${w} `;
      for (let i = 0; i + 3 <= padded.length; i++) add(`t:${padded.slice(i, i + 3)}`, 0.5);
    }
  } else {
    for (const id of input) add(`i:${id}`, 1);
  }
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  return Array.from(v, (x) => x / norm);
}
