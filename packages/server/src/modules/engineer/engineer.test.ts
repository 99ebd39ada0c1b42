import { describe, expect, it } from 'vitest';
import { AppError } from '../../errors.js';
import { compactHistory, engineerLoop, type TurnResult } from './engineer-loop.js';
import type { ChatMessage } from '../../providers/conversation.js';
import { runTool, type ToolContext, type CommandOutcome } from './engineer-tools.js';
import { parseTextTurn } from './text-protocol.js';
import { headAndTail, unifiedDiff, Workspace, workspacePath } from './workspace.js';

const ctx = (ws: Workspace, run: (command: string, files: Array<{ path: string; content: string }>) => CommandOutcome = () => ({ exitCode: 0, output: '' })): ToolContext => ({
  workspace: ws,
  runCommand: async (command, files) => run(command, files),
  checksCommand: async () => 'python3 -m unittest',
});
const call = (ws: Workspace, name: string, args: unknown, c = ctx(ws)) => runTool(name, typeof args === 'string' ? args : JSON.stringify(args), c);

describe('workspace paths', () => {
  it('normalises relative paths and refuses every escape', () => {
    expect(workspacePath('src//a/./b.ts')).toBe('src/a/b.ts');
    expect(workspacePath('./x')).toBe('x');
    expect(workspacePath('.', { root: true })).toBe('');
    for (const hostile of ['../x', 'a/../../x', 'a/..', '/etc/passwd', '~/.ssh/id_rsa', 'C:/x', 'a\\..\\b', 'a\u0000b', 'a\nb', '.', '', 'x'.repeat(401)]) {
      expect(() => workspacePath(hostile), hostile).toThrow();
    }
    expect(() => workspacePath(42)).toThrow(/string/);
  });

  it('every tool refuses a hostile path with a clear message and leaves the workspace as it was', async () => {
    const ws = new Workspace([{ path: 'a.txt', content: 'a\n' }]);
    for (const [name, args] of [
      ['read_file', { path: '../../etc/passwd' }], ['write_file', { path: '/etc/cron.d/x', content: 'x' }], ['write_file', { path: '../escape', content: 'x' }],
      ['edit_file', { path: 'a/../../a.txt', old_text: 'a', new_text: 'b' }], ['list_files', { path: '..' }], ['search', { pattern: 'a', path: '/' }],
    ] as const) {
      const r = await call(ws, name, args);
      expect(r.ok, name).toBe(false);
      expect(r.output, name).toMatch(/^Refused: path .* (leaves the workspace|is absolute)/);
    }
    expect(ws.all()).toEqual([{ path: 'a.txt', content: 'a\n' }]);
  });

  it('a file cannot sit where a directory is, nor under a file', () => {
    const ws = new Workspace([{ path: 'src/a.ts', content: '' }]);
    expect(() => ws.write('src', 'x')).toThrow(/directory/);
    expect(() => ws.write('src/a.ts/b', 'x')).toThrow(/is a file/);
  });
});

describe('the engineer tools', () => {
  it('edit_file replaces one exact occurrence and fails clearly when the text is missing or not unique', async () => {
    const ws = new Workspace([{ path: 'calc.py', content: 'def add(a, b):\n    return a - b\n\n# a - b\n' }]);
    expect(await call(ws, 'edit_file', { path: 'calc.py', old_text: 'a * b', new_text: 'x' })).toMatchObject({ ok: false, output: expect.stringMatching(/old_text was not found/) });
    expect(await call(ws, 'edit_file', { path: 'calc.py', old_text: 'a - b', new_text: 'a + b' })).toMatchObject({ ok: false, output: expect.stringMatching(/occurs 2 times/) });
    expect(await call(ws, 'edit_file', { path: 'nope.py', old_text: 'a', new_text: 'b' })).toMatchObject({ ok: false, output: expect.stringMatching(/no such file/) });
    expect(await call(ws, 'edit_file', { path: 'calc.py', old_text: '    return a - b', new_text: '    return a + b' })).toMatchObject({ ok: true, output: 'Edited calc.py: replaced 1 occurrence (line 2).' });
    expect(ws.read('calc.py')).toBe('def add(a, b):\n    return a + b\n\n# a - b\n');
  });

  it('read_file numbers lines and takes a range; list_files and search are bounded', async () => {
    const ws = new Workspace([{ path: 'a.txt', content: 'one\ntwo\nthree' }, ...Array.from({ length: 600 }, (_, i) => ({ path: `many/f${i}.txt`, content: 'needle\n'.repeat(2) }))]);
    expect((await call(ws, 'read_file', { path: 'a.txt', start_line: 2, end_line: 2 })).output).toBe('    2  two');
    const list = await call(ws, 'list_files', {});
    expect(list.output).toMatch(/\[… 101 more files\]$/);
    const search = await call(ws, 'search', { pattern: 'needle' });
    expect(search.output.split('\n').filter((l) => l.startsWith('many/'))).toHaveLength(100);
    expect(search.output).toMatch(/\[… 1100 more matches\]/);
    expect((await call(ws, 'search', { pattern: 'th+ree', regex: true })).output).toBe('a.txt:3: three');
    expect(await call(ws, 'search', { pattern: '(', regex: true })).toMatchObject({ ok: false, output: expect.stringMatching(/not a valid regular expression/) });
  });

  it('a regular expression that backtracks for ever is stopped at its time limit, not the server', async () => {
    const ws = new Workspace([{ path: 'a.txt', content: `${'a'.repeat(60)}b\n` }]);
    const started = Date.now();
    expect(await call(ws, 'search', { pattern: '(a+)+$', regex: true })).toMatchObject({ ok: false, output: expect.stringMatching(/took longer than 2000 ms/) });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await call(ws, 'search', { pattern: 'a{3}b$', regex: true })).output).toBe(`a.txt:1: ${'a'.repeat(60)}b`);
  });

  it('unknown tools and malformed arguments are failed results, not errors', async () => {
    const ws = new Workspace();
    expect(await call(ws, 'rm_rf', {})).toMatchObject({ ok: false, output: expect.stringMatching(/^Unknown tool "rm_rf": the tools are list_files, read_file, write_file, edit_file, search, run, finish/) });
    expect(await call(ws, 'write_file', '{not json')).toMatchObject({ ok: false, output: 'Refused: the arguments are not valid JSON.' });
    expect(await call(ws, 'write_file', '[1]')).toMatchObject({ ok: false });
    expect(await call(ws, 'write_file', { path: 'a' })).toMatchObject({ ok: false, output: 'Refused: content must be a string.' });
  });

  it('run lays the workspace out, takes changed, new and deleted files back, and keeps what the sandbox left out', async () => {
    const ws = new Workspace([{ path: 'keep.txt', content: 'k' }, { path: 'gone.txt', content: 'g' }, { path: 'big.bin', content: 'b' }]);
    let seen: string[] = [];
    const c = ctx(ws, (command, files) => {
      seen = files.map((f) => f.path);
      return { exitCode: 1, output: 'x'.repeat(50_000), files: { files: [{ path: 'keep.txt', content: 'changed' }, { path: 'new/file.txt', content: 'n' }], complete: true, skipped: ['big.bin (binary)'] } };
    });
    const r = await call(ws, 'run', { command: 'make' }, c);
    expect(seen).toEqual(['big.bin', 'gone.txt', 'keep.txt']);
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/^\$ make\n\[exit 1\]\n/);
    expect(r.output).toMatch(/\[… \d+ characters left out …\]/);
    expect(r.output.length).toBeLessThan(13_000);
    expect(ws.all()).toEqual([{ path: 'big.bin', content: 'b' }, { path: 'keep.txt', content: 'changed' }, { path: 'new/file.txt', content: 'n' }]);
    // An incomplete report deletes nothing.
    const c2 = ctx(ws, () => ({ exitCode: 0, output: '', files: { files: [], complete: false, skipped: [] } }));
    await call(ws, 'run', { command: 'true' }, c2);
    expect(ws.size).toBe(3);
    // The word `checks` runs the language's checks.
    let ran = '';
    await call(ws, 'run', { command: 'checks' }, ctx(ws, (command) => { ran = command; return { exitCode: 0, output: '' }; }));
    expect(ran).toBe('python3 -m unittest');
  });
});

describe('diffs and truncation', () => {
  it('writes unified diffs for added, modified and deleted files', () => {
    expect(unifiedDiff('a.txt', undefined, 'x\ny\n')).toBe('--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n');
    expect(unifiedDiff('a.txt', 'x\n', undefined)).toBe('--- a/a.txt\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-x\n');
    const before = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
    const after = before.replace('line 10\n', 'line ten\n');
    expect(unifiedDiff('f', before, after)).toBe('--- a/f\n+++ b/f\n@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+line ten\n line 11\n line 12\n line 13\n');
    const ws = new Workspace([{ path: 'a', content: '1\n' }, { path: 'b', content: '2\n' }]);
    ws.write('a', '1\n2\n');
    ws.delete('b');
    ws.write('c', '3\n');
    expect(ws.changes().map((c) => [c.path, c.status])).toEqual([['a', 'modified'], ['b', 'deleted'], ['c', 'added']]);
  });

  it('keeps the head and the tail of long text with a marker', () => {
    const text = `${'h'.repeat(100)}${'m'.repeat(1000)}${'t'.repeat(100)}`;
    const cut = headAndTail(text, 200);
    expect(cut.startsWith('h'.repeat(80))).toBe(true);
    expect(cut.endsWith('t'.repeat(100))).toBe(true);
    expect(cut).toContain('[… 1000 characters left out …]');
    expect(headAndTail('short', 200)).toBe('short');
  });
});

describe('the text protocol', () => {
  it('reads exactly one fenced command per turn', () => {
    expect(parseTextTurn('I will test.\n```bash\npython3 -m unittest\n```')).toEqual({ name: 'run', arguments: JSON.stringify({ command: 'python3 -m unittest' }) });
    expect(parseTextTurn('```tool write_file\n{"path":"a","content":"x"}\n```')).toEqual({ name: 'write_file', arguments: '{"path":"a","content":"x"}' });
    expect(parseTextTurn('Done.\n```finish\nAll tests pass.\n```')).toEqual({ name: 'finish', arguments: JSON.stringify({ summary: 'All tests pass.' }) });
    expect(parseTextTurn('no block')).toMatchObject({ error: expect.stringMatching(/no fenced block/) });
    expect(parseTextTurn('```bash\nls\n```\n```bash\npwd\n```')).toMatchObject({ error: expect.stringMatching(/2 fenced blocks/) });
    expect(parseTextTurn('```python\nprint(1)\n```')).toMatchObject({ error: expect.stringMatching(/not bash, finish or tool NAME/) });
  });
});

describe('the loop', () => {
  const events = () => {
    const log: string[] = [];
    return { log, events: { toolCall: (e: { name: string }) => { log.push(`call ${e.name}`); }, toolResult: (e: { ok: boolean }) => { log.push(`result ${e.ok}`); } } };
  };

  it('with the text protocol: fail → fix → pass → finish, the format error told back', async () => {
    const ws = new Workspace();
    const answers = [
      '```tool write_file\n{"path":"calc.py","content":"def add(a, b):\\n    return a - b\\n"}\n```',
      'oops, no block',
      '```bash\ntest\n```',
      '```tool edit_file\n{"path":"calc.py","old_text":"a - b","new_text":"a + b"}\n```',
      '```bash\ntest\n```',
      '```finish\nfixed add\n```',
    ];
    const seen: string[] = [];
    const { log, events: ev } = events();
    const outcome = await engineerLoop({
      role: 'engineer', prompt: 'Task: add', native: false, maxSteps: 10, signal: new AbortController().signal,
      turn: async (messages, tools) => { expect(tools).toBeUndefined(); seen.push(messages.at(-1)!.content); return { text: answers.shift()! }; },
      tools: ctx(ws, () => (ws.read('calc.py')!.includes('a + b') ? { exitCode: 0, output: 'OK' } : { exitCode: 1, output: 'FAILED' })),
      events: ev,
    });
    expect(outcome.summary).toBe('fixed add');
    expect(outcome.steps).toBe(6);
    expect(outcome.lastRun).toMatchObject({ command: 'test', exit_code: 0 });
    expect(seen[2]).toMatch(/^Format error: the answer holds no fenced block/);
    expect(seen[3]).toMatch(/^run failed:\n\$ test\n\[exit 1\]\nFAILED/);
    expect(log).toEqual(['call write_file', 'result true', 'call run', 'result false', 'call edit_file', 'result true', 'call run', 'result true', 'call finish', 'result true']);
  });

  it('ends with max_steps_reached when the model never finishes', async () => {
    let n = 0;
    const turn = async (): Promise<TurnResult> => ({ text: '', toolCalls: [{ id: `c${n++}`, name: 'list_files', arguments: '{}' }] });
    const run = engineerLoop({ role: 'r', prompt: 'p', native: true, maxSteps: 3, signal: new AbortController().signal, turn, tools: ctx(new Workspace()), events: events().events });
    await expect(run).rejects.toMatchObject({ code: 'max_steps_reached' });
    await expect(run).rejects.toBeInstanceOf(AppError);
    expect(n).toBe(3);
  });
});

describe('a long loop\'s history', () => {
  it('is kept within its budget: old tool outputs cut to head and tail, old file contents left out, the recent messages whole', () => {
    const big = 'x'.repeat(50_000);
    const messages: ChatMessage[] = [{ role: 'system', content: 'sys' }, { role: 'user', content: 'Task: t' }];
    for (let i = 0; i < 10; i++) {
      messages.push({ role: 'assistant', content: '', toolCalls: [{ id: `c${i}`, name: 'write_file', arguments: JSON.stringify({ path: `f${i}`, content: big }) }] });
      messages.push({ role: 'tool', toolCallId: `c${i}`, content: big });
    }
    compactHistory(messages, 450_000);
    const size = messages.reduce((n, m) => n + m.content.length + (m.toolCalls?.reduce((k, c) => k + c.arguments.length, 0) ?? 0), 0);
    expect(size).toBeLessThanOrEqual(450_000);
    expect(JSON.parse(messages[2]!.toolCalls![0]!.arguments)).toEqual({ path: 'f0', content: '[50000 characters, left out of the history]' });
    expect(messages[3]!.content).toMatch(/\[… \d+ characters left out …\]/);
    for (const m of messages.slice(-8)) expect(m.content.length + (m.toolCalls?.[0]?.arguments.length ?? 0)).toBeGreaterThanOrEqual(50_000);
    expect(messages.slice(0, 2)).toEqual([{ role: 'system', content: 'sys' }, { role: 'user', content: 'Task: t' }]);
  });
});
