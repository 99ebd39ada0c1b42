/**
 * Turns generated tokens into text pieces for streaming. Two things make this
 * more than `detokenize(token)`:
 *  - byte-level tokens split multi-byte characters, so a token whose text ends
 *    in U+FFFD is held until the character completes (at most a few tokens);
 *  - chat templates stop on text markers (e.g. "### Human:"), so text that
 *    could be the start of a marker is held until it is known not to be one,
 *    and the marker itself is never sent.
 */
import type { Token } from './node-llama-cpp-types.js';

export type Detokenize = (tokens: readonly Token[], lastTokens: readonly Token[]) => string;

/** A character needs at most 4 UTF-8 bytes, so at most 4 byte tokens. */
const MAX_UNDECODED = 4;
/** Tokens of context passed to the detokenizer, so pieces get the right leading space. */
const CONTEXT_TOKENS = 8;

export class TokenText {
  private undecoded: Token[] = [];
  private recent: Token[];
  private held = '';
  private stopped = false;

  constructor(
    private readonly detokenize: Detokenize,
    private readonly stopTexts: readonly string[],
    precedingTokens: readonly Token[] = [],
  ) {
    this.recent = precedingTokens.slice(-CONTEXT_TOKENS);
  }

  /** Text safe to send after this token, and whether a stop marker was reached. */
  push(token: Token): { text: string; stop: boolean } {
    if (this.stopped) return { text: '', stop: true };
    this.undecoded.push(token);
    const piece = this.detokenize(this.undecoded, this.recent);
    if (piece.endsWith('\uFFFD') && this.undecoded.length < MAX_UNDECODED) return { text: '', stop: false };
    this.recent = [...this.recent, ...this.undecoded].slice(-CONTEXT_TOKENS);
    this.undecoded = [];
    return this.release(piece);
  }

  /** Whatever is still held once generation ends. */
  flush(): string {
    if (this.stopped) return '';
    const rest = this.undecoded.length > 0 ? this.detokenize(this.undecoded, this.recent) : '';
    this.undecoded = [];
    const out = this.release(rest);
    if (out.stop) return out.text;
    const text = out.text + this.held;
    this.held = '';
    return text;
  }

  private release(piece: string): { text: string; stop: boolean } {
    this.held += piece;
    let stopAt = -1;
    for (const stop of this.stopTexts) {
      const at = this.held.indexOf(stop);
      if (at >= 0 && (stopAt < 0 || at < stopAt)) stopAt = at;
    }
    if (stopAt >= 0) {
      this.stopped = true;
      const text = this.held.slice(0, stopAt);
      this.held = '';
      return { text, stop: true };
    }
    const keep = this.partialStopSuffix();
    const text = this.held.slice(0, this.held.length - keep);
    this.held = this.held.slice(this.held.length - keep);
    return { text, stop: false };
  }

  /** Length of the longest end of `held` that begins some stop marker. */
  private partialStopSuffix(): number {
    let longest = 0;
    for (const stop of this.stopTexts) {
      for (let n = Math.min(stop.length - 1, this.held.length); n > longest; n--) {
        if (this.held.endsWith(stop.slice(0, n))) {
          longest = n;
          break;
        }
      }
    }
    return longest;
  }
}
