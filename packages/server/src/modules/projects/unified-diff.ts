/**
 * Unified diffs (the `diff -u` / `git diff` format) of two versions of a text file, for project revisions.
 * Lines are compared with their line ends, so a last line that gains or loses its newline shows as changed, with
 * git's "\ No newline at end of file" marker. The common head and tail are trimmed first; the middle is aligned
 * by a longest common subsequence when it is small enough (≤ 4 million cells), otherwise it is shown as
 * replaced as a whole (still a correct diff, only a longer one).
 */
const CONTEXT = 3;
const MAX_CELLS = 4_000_000;

type Op = { kind: ' ' | '-' | '+'; line: string };

function splitLines(text: string): string[] {
  return text === '' ? [] : (text.match(/[^\n]*\n|[^\n]+$/g) ?? []);
}

function alignMiddle(a: string[], b: string[]): Op[] {
  const n = a.length, m = b.length;
  if (n === 0) return b.map((line) => ({ kind: '+', line }));
  if (m === 0) return a.map((line) => ({ kind: '-', line }));
  if ((n + 1) * (m + 1) > MAX_CELLS) return [...a.map((line) => ({ kind: '-' as const, line })), ...b.map((line) => ({ kind: '+' as const, line }))];
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
  const w = m + 1;
  const lcs = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * w + j] = a[i] === b[j] ? lcs[(i + 1) * w + j + 1]! + 1 : Math.max(lcs[(i + 1) * w + j]!, lcs[i * w + j + 1]!);
    }
  }
  const ops: Op[] = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) { ops.push({ kind: ' ', line: a[i]! }); i++; j++; }
    else if (lcs[(i + 1) * w + j]! >= lcs[i * w + j + 1]!) ops.push({ kind: '-', line: a[i++]! });
    else ops.push({ kind: '+', line: b[j++]! });
  }
  while (i < n) ops.push({ kind: '-', line: a[i++]! });
  while (j < m) ops.push({ kind: '+', line: b[j++]! });
  return ops;
}

function editScript(a: string[], b: string[]): Op[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  return [
    ...a.slice(0, head).map((line) => ({ kind: ' ' as const, line })),
    ...alignMiddle(a.slice(head, a.length - tail), b.slice(head, b.length - tail)),
    ...a.slice(a.length - tail).map((line) => ({ kind: ' ' as const, line })),
  ];
}

const range = (start: number, count: number) => (count === 1 ? `${start}` : `${count === 0 ? start - 1 : start},${count}`);

/**
 * The unified diff from `before` to `after` of the file at `path` (null for a side where the file does not
 * exist: an added or deleted file). Empty when the two are equal.
 */
export function unifiedDiff(path: string, before: string | null, after: string | null): string {
  if (before === after) return '';
  const a = splitLines(before ?? '');
  const b = splitLines(after ?? '');
  const ops = editScript(a, b);
  const out: string[] = [before === null ? '--- /dev/null' : `--- a/${path}`, after === null ? '+++ /dev/null' : `+++ b/${path}`];
  // Hunks: runs of changes with up to CONTEXT lines around them, merged when their context touches.
  const changed = ops.map((op, k) => (op.kind !== ' ' ? k : -1)).filter((k) => k >= 0);
  let k = 0;
  while (k < changed.length) {
    const start = Math.max(0, changed[k]! - CONTEXT);
    let end = changed[k]!;
    while (k + 1 < changed.length && changed[k + 1]! - end <= 2 * CONTEXT) end = changed[++k]!;
    k++;
    const stop = Math.min(ops.length, end + CONTEXT + 1);
    let oldLine = 1, newLine = 1;
    for (let x = 0; x < start; x++) { if (ops[x]!.kind !== '+') oldLine++; if (ops[x]!.kind !== '-') newLine++; }
    const body: string[] = [];
    let oldCount = 0, newCount = 0;
    for (let x = start; x < stop; x++) {
      const op = ops[x]!;
      if (op.kind !== '+') oldCount++;
      if (op.kind !== '-') newCount++;
      const text = op.line.endsWith('\n') ? op.line.slice(0, -1) : op.line;
      body.push(`${op.kind}${text}`);
      if (!op.line.endsWith('\n')) body.push('\\ No newline at end of file');
    }
    out.push(`@@ -${range(oldLine, oldCount)} +${range(newLine, newCount)} @@`, ...body);
  }
  return `${out.join('\n')}\n`;
}
