/**
 * The fake vendors' tokenizer (`countTokens: true` in a fake's script): what a vendor reporting true token
 * counts would say, modelled on byte-level BPE where it costs the most. It is the fake's own rule, not a
 * real vocabulary, chosen so that the scripts that made Codeloom's old prompt estimate 2–4× low stay
 * expensive, while never exceeding what a byte-level tokenizer could make of the text (one token per byte):
 *
 *   - a run of ASCII letters or digits: one token per three characters (rounded up); random strings
 *     tokenize badly, and this is how badly;
 *   - a run of blanks: one token; any other ASCII character: one token;
 *   - any other character: one token per UTF-8 byte after its first (a CJK ideograph 2, an emoji 3,
 *     an accented Latin letter 1), at least one;
 *   - the chat format: 4 tokens per message and 3 per call (OpenAI counts 3 and 3).
 */
const RUN = /[A-Za-z0-9]+|[ \t]+|[\x00-\x7f]|[\s\S]/gu;

export function fakeTokenCount(text: string): number {
  let n = 0;
  for (const piece of text.match(RUN) ?? []) {
    const c = piece.charCodeAt(0);
    if (/^[A-Za-z0-9]/.test(piece)) n += Math.ceil(piece.length / 3);
    else if (c < 0x80) n += 1;
    else n += Math.max(1, Buffer.byteLength(piece, 'utf8') - 1);
  }
  return n;
}

/** A chat request's prompt tokens by the fake's rule: its messages (and a legacy completion's prompt and suffix), plus the chat format. */
export function fakePromptTokens(body: any): number {
  const texts: string[] = [];
  if (Array.isArray(body?.messages)) for (const m of body.messages) texts.push(typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? ''));
  if (typeof body?.system === 'string') texts.push(body.system);
  if (typeof body?.prompt === 'string') texts.push(body.prompt);
  if (typeof body?.suffix === 'string') texts.push(body.suffix);
  return 3 + texts.reduce((n, t) => n + 4 + fakeTokenCount(t), 0);
}
