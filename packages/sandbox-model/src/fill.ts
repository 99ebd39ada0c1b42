import type { SandboxCall } from './types.js';

/** Languages whose line comments start with `#` (guessed from the code before the cursor). */
const HASH_COMMENT = /(^|\n)\s*(def |import \w+$|from \w+ import|#!|class \w+.*:$|elif |puts |require ['"])/m;

/**
 * The sandbox model's fill-in-the-middle answer (deterministic, not AI). Mid-line it completes the
 * expression with a placeholder value; at a line start it writes one comment line at the indentation of
 * the block around the cursor, saying what belongs between prefix and suffix, in the language's comment
 * syntax. Same prefix and suffix, same bytes.
 */
export function renderSandboxFill(prefix: string, suffix: string): string {
  const lines = prefix.split('\n');
  const current = lines.at(-1) ?? '';
  const hash = HASH_COMMENT.test(prefix);
  if (current.trim() !== '') return hash ? 'None  # sandbox fill-in-the-middle' : 'null /* sandbox fill-in-the-middle */';
  const previous = lines.slice(0, -1).reverse().find((l) => l.trim() !== '') ?? '';
  const indent = current !== '' ? '' : (previous.match(/^[ \t]*/)?.[0] ?? '') + (/[{:(\[]\s*$/.test(previous) ? '  ' : '');
  const after = suffix === '' ? 0 : suffix.split('\n').length;
  const note = `${hash ? '#' : '//'} sandbox fill-in-the-middle: ${lines.length} line${lines.length === 1 ? '' : 's'} before, ${after} after`;
  return `${indent}${note}${suffix.startsWith('\n') ? '' : '\n'}`;
}

/** The fill of a call with a suffix: the prompt is its last user message. */
export function renderSandboxFillFor(call: SandboxCall): string {
  const prefix = [...call.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  return renderSandboxFill(prefix, call.suffix ?? '');
}

/** Text up to (not including) the first stop sequence, whether one was found, and which. */
export function cutAtStop(text: string, stop: readonly string[] | undefined): { text: string; stopped: boolean; sequence?: string } {
  let end = -1;
  let sequence: string | undefined;
  for (const s of stop ?? []) {
    if (!s) continue;
    const i = text.indexOf(s);
    if (i >= 0 && (end < 0 || i < end)) {
      end = i;
      sequence = s;
    }
  }
  return end < 0 ? { text, stopped: false } : { text: text.slice(0, end), stopped: true, sequence: sequence! };
}
