/**
 * How the sandbox model (a deterministic template model, not AI) cuts its
 * text into tokens, roughly as a GPT-2-style BPE pre-tokenizer would: a word
 * with at most one leading space, up to three digits, one punctuation mark
 * (with its leading space), a newline, a run of indentation. Every character
 * belongs to exactly one piece, so the pieces always concatenate back to the
 * exact text, which streaming relies on.
 */
const PIECE = / ?[\p{L}\p{M}]+| ?\p{N}{1,3}| ?[^\s\p{L}\p{M}\p{N}]|\r?\n|[ \t]+(?=[ \t])|[ \t]+|[\s\S]/gu;

export function tokenize(text: string): string[] {
  return text.match(PIECE) ?? [];
}

export function countTokens(text: string): number {
  return tokenize(text).length;
}
