/**
 * The eval's task sets (docs/verification.md, "The eval"): the HumanEval and MBPP JSON Lines readers
 * (eval/task-sets.mjs) — the fields read, the hidden test files made, every bad line reported with its line
 * number — and the built-in set (eval/tasks.mjs): at least 10 hidden tests per task, its hand-written cases
 * agreeing with the reference implementations that compute the others.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain JavaScript module of the repository's scripts
import { parseTaskSet, readTaskSet } from '../../../eval/task-sets.mjs';
// @ts-expect-error plain JavaScript module of the repository's scripts
import { PROBLEMS, REFERENCE, TASKS } from '../../../eval/tasks.mjs';

type Task = { id: string; language: string; format?: string; prompt: string; hidden: Array<{ path: string; content: string }>; reference?: Array<{ path: string; content: string }>; line?: number };

const HUMANEVAL = {
  task_id: 'HumanEval/0', entry_point: 'has_close_elements',
  prompt: 'from typing import List\n\n\ndef has_close_elements(numbers: List[float], threshold: float) -> bool:\n    """ Check if any two numbers are closer than threshold. """\n',
  canonical_solution: '    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n',
  test: "\n\nMETADATA = {'author': 'jt'}\n\n\ndef check(candidate):\n    assert candidate([1.0, 2.0, 3.9], 0.3) == False\n    assert candidate([1.0, 2.8, 3.0], 0.3) == True\n\n",
};
const MBPP = {
  task_id: 11, text: 'Write a python function to remove first and last occurrence of a given character from the string.',
  code: 'def remove_Occ(s,ch): \r\n    return s',
  test_list: ['assert remove_Occ("hello","l") == "heo"', 'assert remove_Occ("abcda","a") == "bcd"', 'assert remove_Occ("PHP","P") == "H"'],
  test_setup_code: 'import re', challenge_test_list: [],
};

describe('HumanEval and MBPP JSON Lines', () => {
  it('reads a HumanEval line: the prompt asked for, check(entry_point) run as one pytest test, the canonical solution for --reference', () => {
    const { tasks, errors } = parseTaskSet(`${JSON.stringify(HUMANEVAL)}\n`, 'he.jsonl') as { tasks: Task[]; errors: string[] };
    expect(errors).toEqual([]);
    expect(tasks).toHaveLength(1);
    const t = tasks[0]!;
    expect(t).toMatchObject({ id: 'HumanEval/0', language: 'python', format: 'humaneval', line: 1 });
    expect(t.prompt).toContain('`has_close_elements`');
    expect(t.prompt).toContain(HUMANEVAL.prompt);
    expect(t.hidden).toHaveLength(1);
    expect(t.hidden[0]!.path).toBe('tests/test_hidden.py');
    const test = t.hidden[0]!.content;
    expect(test).toContain('from solution import has_close_elements\n');
    expect(test).toContain(HUMANEVAL.test);
    expect(test.trimEnd().endsWith('def test_check():\n    check(has_close_elements)')).toBe(true);
    expect(t.reference).toEqual([{ path: 'solution.py', content: HUMANEVAL.prompt + HUMANEVAL.canonical_solution }]);
  });

  it('reads an MBPP line: the function name from test_list, one pytest test per assert after the setup code; the sanitized fields too', () => {
    const { tasks, errors } = parseTaskSet([JSON.stringify(MBPP), JSON.stringify({ task_id: 'm2', prompt: 'Add two numbers.', test_imports: ['import math'], test_list: ['assert math.isclose(add_f(0.1, 0.2), 0.3)'] })].join('\n')) as { tasks: Task[]; errors: string[] };
    expect(errors).toEqual([]);
    const [t, sanitized] = tasks as [Task, Task];
    expect(t).toMatchObject({ id: '11', language: 'python', format: 'mbpp', line: 1 });
    expect(t.prompt).toContain('`remove_Occ`');
    expect(t.prompt).toContain(MBPP.text);
    expect(t.prompt).toContain(MBPP.test_list[0]);
    expect(t.prompt).not.toContain(MBPP.test_list[1]);
    const test = t.hidden[0]!.content;
    expect(test.match(/^def test_\d+\(\):$/gm)).toHaveLength(3);
    for (const assertion of MBPP.test_list) expect(test).toContain(`    ${assertion}\n`);
    expect(test.indexOf('import re')).toBeLessThan(test.indexOf('def test_0'));
    expect(t.reference).toEqual([{ path: 'solution.py', content: `${MBPP.code}\n` }]);
    expect(sanitized).toMatchObject({ id: 'm2', format: 'mbpp', line: 2 });
    expect(sanitized.prompt).toContain('`add_f`');
    expect(sanitized.prompt).toContain('Add two numbers.');
  });

  it('reports every bad line with its line number, and keeps the good ones', () => {
    const lines = [
      JSON.stringify(HUMANEVAL), // 1
      '', // 2: blank lines are skipped
      '{"task_id": 1, "text": "x",', // 3
      '[1, 2]', // 4
      JSON.stringify({ task_id: 5, text: 'no tests' }), // 5
      JSON.stringify({ task_id: 6, prompt: 'def f():\n', entry_point: 'f' }), // 6: no test
      JSON.stringify({ task_id: 7, prompt: 'p', entry_point: 'not a name', test: 'def check(c): pass' }), // 7
      JSON.stringify({ foo: 'bar' }), // 8
      JSON.stringify({ ...HUMANEVAL }), // 9: duplicate id
      JSON.stringify({ task_id: 10, text: 'x', test_list: ['print(1)'] }), // 10: no function to name
      JSON.stringify({ task_id: 11, text: 'x', test_list: [] }), // 11
      JSON.stringify({ task_id: true, text: 'x', test_list: ['assert f(1) == 1'] }), // 12
      JSON.stringify(MBPP), // 13
    ];
    const { tasks, errors } = parseTaskSet(lines.join('\r\n'), 'set.jsonl') as { tasks: Task[]; errors: string[] };
    expect(tasks.map((t) => [t.id, t.line])).toEqual([['HumanEval/0', 1], ['11', 13]]);
    expect(errors.map((e) => e.split(':').slice(0, 2).join(':'))).toEqual(['set.jsonl:3', 'set.jsonl:4', 'set.jsonl:5', 'set.jsonl:6', 'set.jsonl:7', 'set.jsonl:8', 'set.jsonl:9', 'set.jsonl:10', 'set.jsonl:11', 'set.jsonl:12']);
    expect(errors[0]).toContain('not JSON');
    expect(errors[1]).toContain('not a JSON object');
    expect(errors[2]).toContain('missing "test_list"');
    expect(errors[3]).toContain('missing "test"');
    expect(errors[4]).toContain('not a Python name');
    expect(errors[5]).toContain('neither HumanEval');
    expect(errors[6]).toContain('already on line 1');
    expect(errors[7]).toContain('no function name');
    expect(errors[8]).toContain('non-empty array');
    expect(errors[9]).toContain('"task_id" must be a string or a number');
  });

  it('readTaskSet refuses a file with bad lines (listing them) or with no task, and reads a good one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'codeloom-tasks-'));
    try {
      const bad = join(dir, 'bad.jsonl');
      writeFileSync(bad, `${JSON.stringify(MBPP)}\nnot json\n\n{}\n`);
      await expect(readTaskSet(bad)).rejects.toThrow(new RegExp(`2 bad line\\(s\\) in ${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\n${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2: not JSON.*\\n.*:4: neither`));
      const empty = join(dir, 'empty.jsonl');
      writeFileSync(empty, '\n\n');
      await expect(readTaskSet(empty)).rejects.toThrow('holds no task');
      const good = join(dir, 'good.jsonl');
      writeFileSync(good, `${JSON.stringify(HUMANEVAL)}\n${JSON.stringify(MBPP)}\n`);
      expect((await readTaskSet(good) as Task[]).map((t) => t.format)).toEqual(['humaneval', 'mbpp']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('npm run eval refuses before building or starting anything', () => {
  const evalScript = (args: string[]) => spawnSync(process.execPath, ['scripts/eval.mjs', ...args], { cwd: new URL('../../../', import.meta.url), encoding: 'utf8', timeout: 20_000 });

  it('a task set with bad lines: exit 1, every bad line named', () => {
    const dir = mkdtempSync(join(tmpdir(), 'codeloom-evalcli-'));
    try {
      const bad = join(dir, 'set.jsonl');
      writeFileSync(bad, `${JSON.stringify(MBPP)}\n{"task_id": 2}\n\n[]\n`);
      const r = evalScript(['--tasks', bad]);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`2 bad line(s) in ${bad}:`);
      expect(r.stderr).toContain(`${bad}:2: neither HumanEval`);
      expect(r.stderr).toContain(`${bad}:4: not a JSON object`);
      expect(r.stdout).toBe('');
      const missing = evalScript(['--tasks', join(dir, 'nope.jsonl')]);
      expect(missing.status).toBe(1);
      expect(missing.stderr).toContain('ENOENT');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--reference on the built-in tasks (which carry no solutions): exit 1 with why', () => {
    const r = evalScript(['--reference']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('--reference needs every task to carry its solution');
  });
});

describe('the built-in task set', () => {
  /** Hidden tests in a task's test file, counted the way each language's runner sees them. */
  const count = (t: Task) => {
    const text = t.hidden.map((h) => h.content).join('\n');
    if (t.language === 'python') return (text.match(/^def test_\w+\(\):$/gm) ?? []).length;
    if (t.language === 'typescript') return (text.match(/^test\('/gm) ?? []).length;
    return (text.match(/^ {2}CHECK\(/gm) ?? []).length;
  };

  it('has 40 tasks, each with at least 10 hidden tests, all distinct', () => {
    const tasks = TASKS as Task[];
    expect(tasks).toHaveLength(40);
    for (const t of tasks) {
      expect(count(t), t.id).toBeGreaterThanOrEqual(10);
      const lines = t.hidden[0]!.content.split('\n').filter((l) => /assert|CHECK\(/.test(l) && !l.startsWith('#define'));
      expect(new Set(lines).size, t.id).toBe(lines.length);
    }
    const total = tasks.reduce((n, t) => n + count(t), 0);
    expect(total).toBeGreaterThanOrEqual(400);
  });

  it('every case agrees with the reference implementations, and the set is the same at every load', async () => {
    for (const [name, , , cases] of PROBLEMS as Array<[string, string, string, Array<[unknown[], unknown]>]>) {
      const [fn] = REFERENCE[name] as [(...a: unknown[]) => unknown];
      for (const [args, want] of cases) expect(fn(...args), `${name}(${JSON.stringify(args)})`).toEqual(want);
    }
    // Known values the references must give (not computed by them).
    expect(REFERENCE.fib[0](35)).toBe(9227465);
    expect(REFERENCE.collatz_steps[0](97)).toBe(118);
    expect(REFERENCE.power_mod[0](2, 31, 1000000007)).toBe(147483634);
    expect(REFERENCE.is_prime[0](104729)).toBe(1);
    // @ts-expect-error plain JavaScript module
    const again = await import('../../../eval/tasks.mjs?again');
    expect(JSON.stringify(again.TASKS)).toBe(JSON.stringify(TASKS));
  });
});
