/**
 * Splits text the way a BPE tokenizer roughly would: a word with its leading
 * spaces, a single punctuation mark, a newline. The pieces concatenate back
 * to the exact text (the last alternative takes any character left over).
 */
const PIECE = /[ \t]*[A-Za-z0-9_]+|[ \t]*[^\sA-Za-z0-9_]|\r?\n|[ \t]+|[\s\S]/g;

export function tokenize(text: string): string[] {
  return text.match(PIECE) ?? [];
}

export function countTokens(text: string): number {
  return tokenize(text).length;
}
