import { Script } from 'node:vm';
import type { ToolDefinition } from '../../providers/conversation.js';
import { headAndTail, Workspace, WorkspaceError, workspacePath, WORKSPACE_MAX_BYTES, WORKSPACE_MAX_FILE_BYTES, WORKSPACE_MAX_FILES } from './workspace.js';

/**
 * The engineer's tools (docs/agents.md "The engineer"): what a model may call, and how each call is carried
 * out over the run's workspace. Every output is bounded (head and tail with a marker); a failure is an
 * output with `ok: false` that says what went wrong, never an exception the run dies of.
 */

export const ENGINEER_TOOL_NAMES = ['list_files', 'read_file', 'write_file', 'edit_file', 'search', 'run', 'finish'] as const;
export type EngineerToolName = (typeof ENGINEER_TOOL_NAMES)[number];

/** The most characters of one tool output the model is shown. */
export const TOOL_OUTPUT_MAX = 12_000;
const LIST_MAX = 500;
const SEARCH_MAX = 100;
const PATTERN_MAX = 500;
const LINE_CUT = 2_000;
const REGEX_TIMEOUT_MS = 2_000;
/** The regular-expression search, run in a context of its own under a time limit (a pathological pattern is stopped). */
const SEARCH_SCRIPT = new Script(`(() => {
  const re = new RegExp(pattern); const hits = []; let more = 0;
  for (const [p, text] of files) {
    const lines = text.split('\\n');
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i].length > cut ? lines[i].slice(0, cut) : lines[i];
      if (!re.test(line)) continue;
      if (hits.length < max) hits.push([p, i + 1, line]); else more++;
    }
  }
  return { hits, more };
})()`);
/** The word `run` takes for the language's own checks (typecheck, tests) as verification runs them. */
export const CHECKS_COMMAND = 'checks';

const str = (description: string, extra: Record<string, unknown> = {}) => ({ type: 'string', description, ...extra });

export const ENGINEER_TOOLS: ToolDefinition[] = [
  { name: 'list_files', description: 'List the workspace\'s files (paths relative to its root), optionally under a directory.', parameters: { type: 'object', properties: { path: str('A directory relative to the workspace root; omit for all files.') }, additionalProperties: false } },
  { name: 'read_file', description: 'Read a file of the workspace, with line numbers; optionally a range of lines.', parameters: { type: 'object', properties: { path: str('The file, relative to the workspace root.', { minLength: 1 }), start_line: { type: 'integer', minimum: 1 }, end_line: { type: 'integer', minimum: 1 } }, required: ['path'], additionalProperties: false } },
  { name: 'write_file', description: 'Create or replace a file of the workspace with the given content.', parameters: { type: 'object', properties: { path: str('The file, relative to the workspace root.', { minLength: 1 }), content: str('The whole new content.') }, required: ['path', 'content'], additionalProperties: false } },
  { name: 'edit_file', description: 'Replace one exact occurrence of old_text in a file by new_text. Fails when old_text is not found or occurs more than once (add surrounding lines to make it unique).', parameters: { type: 'object', properties: { path: str('The file, relative to the workspace root.', { minLength: 1 }), old_text: str('The exact text to replace (whitespace included).', { minLength: 1 }), new_text: str('What replaces it.') }, required: ['path', 'old_text', 'new_text'], additionalProperties: false } },
  { name: 'search', description: `Search the workspace's files for a literal text (or a regular expression with regex: true); at most ${SEARCH_MAX} matching lines.`, parameters: { type: 'object', properties: { pattern: str('The text or regular expression.', { minLength: 1 }), regex: { type: 'boolean' }, path: str('Only under this directory or file.') }, required: ['pattern'], additionalProperties: false } },
  { name: 'run', description: `Run a shell command in a fresh sandbox holding the workspace (no network; time, memory and process limits). Files it creates, changes or deletes are kept. The command "${CHECKS_COMMAND}" runs the language's own checks (typecheck and tests).`, parameters: { type: 'object', properties: { command: str('A shell command line, run in the workspace root.', { minLength: 1 }) }, required: ['command'], additionalProperties: false } },
  { name: 'finish', description: 'End the work: say what was done and whether the tests pass.', parameters: { type: 'object', properties: { summary: str('What was done.') }, required: ['summary'], additionalProperties: false } },
];

/** What one `run` did, as the sandbox reports it. */
export interface CommandOutcome {
  exitCode: number | null;
  output: string;
  killed?: string | undefined;
  /** The work directory's files afterwards; `complete` false when some were left out (then none is taken as deleted). */
  files?: { files: Array<{ path: string; content: string }>; complete: boolean; skipped: string[] } | undefined;
  unavailable?: string;
}

export interface ToolContext {
  workspace: Workspace;
  /** Runs a command over the workspace's files in a fresh sandbox. */
  runCommand(command: string, files: Array<{ path: string; content: string }>): Promise<CommandOutcome>;
  /** The shell command line of the language's checks over these files, or why there is none. */
  checksCommand(files: Array<{ path: string; content: string }>): Promise<string | { unavailable: string }>;
}

export interface ToolOutcome {
  ok: boolean;
  output: string;
  /** `finish`: the summary. */
  finished?: string;
  /** `run`: the command's exit status, for the last test run a reviewer sees. */
  run?: { command: string; exit_code: number | null; output: string };
}

const fail = (output: string): ToolOutcome => ({ ok: false, output });

function args(raw: string): Record<string, unknown> {
  let parsed: unknown;
  try { parsed = raw.trim() ? JSON.parse(raw) : {}; } catch { throw new WorkspaceError('the arguments are not valid JSON'); }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new WorkspaceError('the arguments must be a JSON object');
  return parsed as Record<string, unknown>;
}

const text = (a: Record<string, unknown>, key: string, required = true): string | undefined => {
  const v = a[key];
  if (v === undefined && !required) return undefined;
  if (typeof v !== 'string') throw new WorkspaceError(`${key} must be a string`);
  return v;
};

const under = (dir: string) => (p: string) => !dir || p === dir || p.startsWith(`${dir}/`);

/** Carries out one tool call. Unknown tools and bad arguments come back as failed outputs. */
export async function runTool(name: string, rawArgs: string, ctx: ToolContext): Promise<ToolOutcome> {
  try {
    const a = args(rawArgs);
    const ws = ctx.workspace;
    switch (name) {
      case 'list_files': {
        const dir = a.path === undefined ? '' : workspacePath(a.path, { root: true });
        const paths = ws.paths().filter(under(dir));
        if (!paths.length) return { ok: true, output: dir ? `No files under ${dir}.` : 'The workspace is empty.' };
        const shown = paths.slice(0, LIST_MAX).map((p) => `${p} (${Buffer.byteLength(ws.read(p)!, 'utf8')} bytes)`);
        return { ok: true, output: `${shown.join('\n')}${paths.length > LIST_MAX ? `\n[… ${paths.length - LIST_MAX} more files]` : ''}` };
      }
      case 'read_file': {
        const path = workspacePath(a.path);
        const content = ws.read(path);
        if (content === undefined) return fail(`${path}: no such file (list_files shows the workspace).`);
        const lines = content.split('\n');
        const int = (v: unknown, d: number) => (typeof v === 'number' && Number.isInteger(v) && v >= 1 ? v : d);
        const from = int(a.start_line, 1);
        const to = Math.min(lines.length, int(a.end_line, lines.length));
        if (from > lines.length) return fail(`${path} has ${lines.length} lines; start_line ${from} is past its end.`);
        const numbered = lines.slice(from - 1, to).map((l, i) => `${String(from + i).padStart(5)}  ${l}`).join('\n');
        return { ok: true, output: headAndTail(numbered, TOOL_OUTPUT_MAX) };
      }
      case 'write_file': {
        const path = workspacePath(a.path);
        const content = text(a, 'content')!;
        const existed = ws.has(path);
        ws.write(path, content);
        return { ok: true, output: `${existed ? 'Replaced' : 'Created'} ${path} (${Buffer.byteLength(content, 'utf8')} bytes).` };
      }
      case 'edit_file': {
        const path = workspacePath(a.path);
        const oldText = text(a, 'old_text')!;
        const newText = text(a, 'new_text')!;
        const content = ws.read(path);
        if (content === undefined) return fail(`${path}: no such file.`);
        if (!oldText) return fail('old_text is empty.');
        const first = content.indexOf(oldText);
        if (first < 0) return fail(`${path}: old_text was not found (it must match exactly, whitespace included; read_file shows the file).`);
        const count = content.split(oldText).length - 1;
        if (count > 1) return fail(`${path}: old_text occurs ${count} times; include more surrounding text so that it occurs once.`);
        ws.write(path, content.slice(0, first) + newText + content.slice(first + oldText.length));
        return { ok: true, output: `Edited ${path}: replaced 1 occurrence (line ${content.slice(0, first).split('\n').length}).` };
      }
      case 'search': {
        const pattern = text(a, 'pattern')!;
        if (!pattern || pattern.length > PATTERN_MAX) return fail(`pattern must be 1–${PATTERN_MAX} characters.`);
        const dir = a.path === undefined ? '' : workspacePath(a.path, { root: true });
        const files = ws.paths().filter(under(dir)).map((p) => [p, ws.read(p)!] as const);
        let found: { hits: Array<[string, number, string]>; more: number };
        if (a.regex === true) {
          try { new RegExp(pattern); } catch (e) { return fail(`pattern is not a valid regular expression: ${(e as Error).message}`); }
          // A model's regular expression can backtrack for ever: it runs in a context of its own with a time limit.
          try {
            found = SEARCH_SCRIPT.runInNewContext({ pattern, files, max: SEARCH_MAX, cut: LINE_CUT }, { timeout: REGEX_TIMEOUT_MS }) as typeof found;
          } catch (e) {
            if ((e as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return fail(`the regular expression took longer than ${REGEX_TIMEOUT_MS} ms; simplify it (or search for a literal).`);
            throw e;
          }
        } else {
          found = { hits: [], more: 0 };
          for (const [p, text] of files) {
            const lines = text.split('\n');
            for (let i = 0; i < lines.length; i++) {
              const line = lines[i]!.length > LINE_CUT ? lines[i]!.slice(0, LINE_CUT) : lines[i]!;
              if (!line.includes(pattern)) continue;
              if (found.hits.length < SEARCH_MAX) found.hits.push([p, i + 1, line]);
              else found.more++;
            }
          }
        }
        const hits = found.hits.map(([p, n, line]) => `${p}:${n}: ${line.length > 300 ? `${line.slice(0, 300)}…` : line}`);
        const more = found.more;
        if (!hits.length) return { ok: true, output: 'No matches.' };
        return { ok: true, output: headAndTail(`${hits.join('\n')}${more ? `\n[… ${more} more matches]` : ''}`, TOOL_OUTPUT_MAX) };
      }
      case 'run': {
        let command = text(a, 'command')!.trim();
        if (!command) return fail('command is empty.');
        if (command.length > 8_000) return fail('command is longer than 8000 characters.');
        if (command === CHECKS_COMMAND) {
          const checks = await ctx.checksCommand(ws.all());
          if (typeof checks !== 'string') return fail(`No checks to run: ${checks.unavailable}.`);
          command = checks;
        }
        const outcome = await ctx.runCommand(command, ws.all());
        if (outcome.unavailable) return fail(`The sandbox cannot run commands here: ${outcome.unavailable}`);
        const notes = applyFiles(ws, outcome.files);
        const status = outcome.killed ? `killed (${outcome.killed}), exit ${outcome.exitCode}` : `exit ${outcome.exitCode}`;
        const output = `$ ${command}\n[${status}]\n${headAndTail(outcome.output, TOOL_OUTPUT_MAX)}${notes ? `\n${notes}` : ''}`;
        return { ok: outcome.exitCode === 0 && !outcome.killed, output, run: { command, exit_code: outcome.exitCode, output: headAndTail(outcome.output, 4_000) } };
      }
      case 'finish': {
        const summary = text(a, 'summary', false) ?? '';
        return { ok: true, output: 'Finished.', finished: summary.slice(0, 8_000) };
      }
      default:
        return fail(`Unknown tool ${JSON.stringify(name.slice(0, 100))}: the tools are ${ENGINEER_TOOL_NAMES.join(', ')}.`);
    }
  } catch (error) {
    if (error instanceof WorkspaceError) return fail(`Refused: ${error.message}.`);
    throw error;
  }
}

/** Takes the sandbox's files back into the workspace: changed and new ones written, missing ones deleted (only when the report is complete). */
function applyFiles(ws: Workspace, back: CommandOutcome['files']): string {
  if (!back) return '[the files could not be read back: the workspace is unchanged]';
  const notes: string[] = [];
  // A file the sandbox left out (binary, too large) is kept as the workspace had it.
  const seen = new Set<string>(back.skipped.map((s) => s.replace(/ \([^()]*\)$/, '')));
  for (const f of back.files) {
    let path: string;
    try { path = workspacePath(f.path); } catch { notes.push(`${f.path}: not kept (its name)`); continue; }
    seen.add(path);
    if (ws.read(path) === f.content) continue;
    try { ws.write(path, f.content); } catch (e) { notes.push(`${path}: not kept (${(e as Error).message})`); }
  }
  if (back.complete) for (const p of ws.paths()) if (!seen.has(p) && !p.split('/').includes('node_modules') && !p.split('/').includes('.git')) ws.delete(p);
  if (!back.complete) notes.push(`[more than ${WORKSPACE_MAX_FILES} files or ${WORKSPACE_MAX_BYTES} bytes: some were not read back, and none was taken as deleted]`);
  for (const s of back.skipped.slice(0, 10)) notes.push(`${s}: not kept`);
  return notes.length ? notes.join('\n') : '';
}

export const COLLECT_LIMITS = { maxFiles: WORKSPACE_MAX_FILES, maxFileBytes: Math.min(WORKSPACE_MAX_FILE_BYTES, 200_000), maxBytes: WORKSPACE_MAX_BYTES };
