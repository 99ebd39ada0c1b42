/**
 * The engineer's workspace (docs/decisions/0008-engineer-workspace.md): the run's files, held by the server
 * as path → text. Every path a tool names goes through `workspacePath` first: relative, normalised, no `..`,
 * no absolute path, no control characters, bounded. Files come back from the sandbox only as regular files
 * (the driver never follows or returns a symlink), so no path here can point outside the workspace.
 */

/** Most files a workspace holds, and most bytes in all / per file. */
export const WORKSPACE_MAX_FILES = 2_000;
export const WORKSPACE_MAX_BYTES = 8 * 1024 * 1024;
export const WORKSPACE_MAX_FILE_BYTES = 1024 * 1024;
const MAX_PATH = 400;

export class WorkspaceError extends Error {
  constructor(message: string) { super(message); this.name = 'WorkspaceError'; }
}

/** A tool's path made canonical, or a WorkspaceError saying why it is refused. `.` (or empty) is the root when `root` is allowed. */
export function workspacePath(raw: unknown, options: { root?: boolean } = {}): string {
  if (typeof raw !== 'string') throw new WorkspaceError('path must be a string');
  if (raw.length > MAX_PATH) throw new WorkspaceError(`path is longer than ${MAX_PATH} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(raw)) throw new WorkspaceError(`path ${JSON.stringify(raw)} holds a control character or a backslash`);
  if (raw.startsWith('/') || /^[A-Za-z]:/.test(raw) || raw.startsWith('~')) throw new WorkspaceError(`path ${JSON.stringify(raw)} is absolute: paths are relative to the workspace`);
  const parts: string[] = [];
  for (const part of raw.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') throw new WorkspaceError(`path ${JSON.stringify(raw)} leaves the workspace ("..")`);
    parts.push(part);
  }
  if (!parts.length) {
    if (options.root) return '';
    throw new WorkspaceError(`path ${JSON.stringify(raw)} names no file`);
  }
  return parts.join('/');
}

export type ChangeStatus = 'added' | 'modified' | 'deleted';
export interface FileChange { path: string; status: ChangeStatus; diff: string }

export class Workspace {
  private readonly files = new Map<string, string>();
  private readonly initial: ReadonlyMap<string, string>;

  constructor(files: ReadonlyArray<{ path: string; content: string }> = []) {
    for (const f of files) {
      try { this.files.set(workspacePath(f.path), f.content); } catch { /* a stored path the workspace cannot hold is left out */ }
    }
    this.initial = new Map(this.files);
  }

  paths(): string[] {
    return [...this.files.keys()].sort();
  }

  get size(): number { return this.files.size; }

  has(path: string): boolean { return this.files.has(path); }

  read(path: string): string | undefined { return this.files.get(path); }

  /** Writes a file (creating it): refused over the per-file, file-count or total limits, or where a file is a directory's name. */
  write(path: string, content: string): void {
    const bytes = Buffer.byteLength(content, 'utf8');
    if (bytes > WORKSPACE_MAX_FILE_BYTES) throw new WorkspaceError(`the file would be ${bytes} bytes; at most ${WORKSPACE_MAX_FILE_BYTES} per file`);
    if (!this.files.has(path)) {
      if (this.files.size >= WORKSPACE_MAX_FILES) throw new WorkspaceError(`the workspace holds ${WORKSPACE_MAX_FILES} files already`);
      for (const p of this.files.keys()) {
        if (p.startsWith(`${path}/`)) throw new WorkspaceError(`${path} is a directory`);
        if (path.startsWith(`${p}/`)) throw new WorkspaceError(`${p} is a file, not a directory`);
      }
    }
    const total = this.totalBytes() - Buffer.byteLength(this.files.get(path) ?? '', 'utf8') + bytes;
    if (total > WORKSPACE_MAX_BYTES) throw new WorkspaceError(`the workspace would hold ${total} bytes; at most ${WORKSPACE_MAX_BYTES}`);
    this.files.set(path, content);
  }

  delete(path: string): boolean { return this.files.delete(path); }

  totalBytes(): number {
    let n = 0;
    for (const c of this.files.values()) n += Buffer.byteLength(c, 'utf8');
    return n;
  }

  all(): Array<{ path: string; content: string }> {
    return this.paths().map((path) => ({ path, content: this.files.get(path)! }));
  }

  /** What changed since the workspace was opened, path order, each with its unified diff. */
  changes(): FileChange[] {
    const out: FileChange[] = [];
    const paths = new Set([...this.initial.keys(), ...this.files.keys()]);
    for (const path of [...paths].sort()) {
      const before = this.initial.get(path);
      const after = this.files.get(path);
      if (before === after) continue;
      const status: ChangeStatus = before === undefined ? 'added' : after === undefined ? 'deleted' : 'modified';
      out.push({ path, status, diff: unifiedDiff(path, before, after) });
    }
    return out;
  }
}

const CONTEXT = 3;
/** Beyond this many lines × lines the LCS table is not built: the diff replaces the whole file. */
const MAX_CELLS = 4_000_000;

function splitLines(text: string | undefined): string[] {
  if (text === undefined || text === '') return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

type Op = { t: ' ' | '-' | '+'; line: string; a: number; b: number };

function editScript(a: string[], b: string[]): Op[] {
  // Common prefix and suffix first: most edits touch a few lines.
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const ops: Op[] = [];
  for (let i = 0; i < pre; i++) ops.push({ t: ' ', line: a[i]!, a: i, b: i });
  const A = a.slice(pre, a.length - suf);
  const B = b.slice(pre, b.length - suf);
  if (A.length * B.length > MAX_CELLS) {
    A.forEach((line, i) => ops.push({ t: '-', line, a: pre + i, b: pre }));
    B.forEach((line, j) => ops.push({ t: '+', line, a: pre + A.length, b: pre + j }));
  } else {
    const n = A.length; const m = B.length;
    const lcs = new Uint32Array((n + 1) * (m + 1));
    for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) {
      lcs[i * (m + 1) + j] = A[i] === B[j] ? lcs[(i + 1) * (m + 1) + j + 1]! + 1 : Math.max(lcs[(i + 1) * (m + 1) + j]!, lcs[i * (m + 1) + j + 1]!);
    }
    let i = 0; let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && A[i] === B[j]) { ops.push({ t: ' ', line: A[i]!, a: pre + i, b: pre + j }); i++; j++; }
      // Removals before additions, as diff(1) writes them.
      else if (i < n && (j >= m || lcs[(i + 1) * (m + 1) + j]! >= lcs[i * (m + 1) + j + 1]!)) { ops.push({ t: '-', line: A[i]!, a: pre + i, b: pre + j }); i++; }
      else { ops.push({ t: '+', line: B[j]!, a: pre + i, b: pre + j }); j++; }
    }
  }
  for (let k = 0; k < suf; k++) ops.push({ t: ' ', line: a[a.length - suf + k]!, a: a.length - suf + k, b: b.length - suf + k });
  return ops;
}

/** A unified diff (`--- a/path`, `+++ b/path`, `@@` hunks with 3 lines of context); /dev/null for an added or deleted file. */
export function unifiedDiff(path: string, before: string | undefined, after: string | undefined): string {
  const a = splitLines(before);
  const b = splitLines(after);
  const ops = editScript(a, b);
  const out = [`--- ${before === undefined ? '/dev/null' : `a/${path}`}`, `+++ ${after === undefined ? '/dev/null' : `b/${path}`}`];
  const changed = ops.map((o, k) => (o.t !== ' ' ? k : -1)).filter((k) => k >= 0);
  let k = 0;
  while (k < changed.length) {
    const start = Math.max(0, changed[k]! - CONTEXT);
    let end = changed[k]!;
    while (k + 1 < changed.length && changed[k + 1]! - end <= 2 * CONTEXT) end = changed[++k]!;
    end = Math.min(ops.length - 1, end + CONTEXT);
    k++;
    const hunk = ops.slice(start, end + 1);
    const aLen = hunk.filter((o) => o.t !== '+').length;
    const bLen = hunk.filter((o) => o.t !== '-').length;
    const aStart = aLen ? hunk.find((o) => o.t !== '+')!.a + 1 : hunk[0]!.a;
    const bStart = bLen ? hunk.find((o) => o.t !== '-')!.b + 1 : hunk[0]!.b;
    out.push(`@@ -${aStart},${aLen} +${bStart},${bLen} @@`);
    for (const o of hunk) out.push(`${o.t}${o.line}`);
  }
  const noNewline = (text: string | undefined) => text !== undefined && text !== '' && !text.endsWith('\n');
  if (noNewline(before) || noNewline(after)) out.push('\\ No newline at end of file');
  return `${out.join('\n')}\n`;
}

/** Long text cut to its head and tail with a marker saying how much was left out. */
export function headAndTail(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = Math.floor(max * 0.4);
  const tail = max - head;
  return `${text.slice(0, head)}\n[… ${text.length - max} characters left out …]\n${text.slice(text.length - tail)}`;
}
