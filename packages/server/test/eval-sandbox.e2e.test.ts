/**
 * The eval's hidden tests really run in the sandbox (docs/verification.md, "The eval"): a HumanEval and an MBPP
 * line pass with their own solutions and fail with a wrong one; built-in tasks pass with correct solutions in
 * Python, TypeScript and C (so their 10+ hidden tests are well-formed and right) and fail with an off-by-one.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load-config.js';
import { VerificationService } from '../src/modules/verify/verification-service.js';
// @ts-expect-error plain JavaScript module of the repository's scripts
import { parseTaskSet } from '../../../eval/task-sets.mjs';
// @ts-expect-error plain JavaScript module of the repository's scripts
import { TASKS } from '../../../eval/tasks.mjs';

type Files = Array<{ path: string; content: string }>;
type Task = { id: string; language: string; hidden: Files; reference?: Files };

const verifier = new VerificationService(loadConfig({ CODELOOM_VERIFY_CONCURRENCY: '2' }));
const probe = await verifier.status();
if (!probe.available) console.log(`skipping the eval sandbox tests: ${probe.reason}`);

const run = async (task: Task, files: Files) => {
  const v = await verifier.verify(task.language, [...files, ...task.hidden], { attempt: 1 });
  return v;
};

describe.skipIf(!probe.available)('eval tasks in the sandbox', () => {
  it('HumanEval and MBPP lines: their solutions pass, wrong ones fail', async () => {
    const { tasks, errors } = parseTaskSet([
      JSON.stringify({ task_id: 'HumanEval/x', entry_point: 'below_zero', prompt: 'from typing import List\n\n\ndef below_zero(operations: List[int]) -> bool:\n    """True when the running balance ever goes below zero."""\n', canonical_solution: '    balance = 0\n    for op in operations:\n        balance += op\n        if balance < 0:\n            return True\n    return False\n', test: "\n\nMETADATA = {}\n\n\ndef check(candidate):\n    assert candidate([]) == False\n    assert candidate([1, 2, -3, 1, 2, -3]) == False\n    assert candidate([1, 2, -4, 5, 6]) == True\n" }),
      JSON.stringify({ task_id: 17, text: 'Write a function to find the perimeter of a square.', code: 'def square_perimeter(a):\r\n  perimeter=4*a\r\n  return perimeter', test_list: ['assert square_perimeter(10)==40', 'assert square_perimeter(5)==20', 'assert square_perimeter(4)==16'], test_setup_code: '' }),
    ].join('\n')) as { tasks: Task[]; errors: string[] };
    expect(errors).toEqual([]);
    const [he, mbpp] = tasks as [Task, Task];
    const [heGood, mbppGood] = await Promise.all([run(he, he.reference!), run(mbpp, mbpp.reference!)]);
    expect(heGood.status, JSON.stringify(heGood).slice(0, 600)).toBe('passed');
    expect(mbppGood.status, JSON.stringify(mbppGood).slice(0, 600)).toBe('passed');
    expect(mbppGood.tests).toMatchObject({ passed: 3, failed: 0 });
    const [heBad, mbppBad] = await Promise.all([
      run(he, [{ path: 'solution.py', content: 'def below_zero(operations):\n    return False\n' }]),
      run(mbpp, [{ path: 'solution.py', content: 'def square_perimeter(a):\n    return 4 * a if a != 5 else 0\n' }]),
    ]);
    expect(heBad.status).toBe('failed');
    expect(mbppBad.status).toBe('failed');
    expect(mbppBad.tests).toMatchObject({ passed: 2, failed: 1 });
  }, 120_000);

  it('built-in tasks pass with correct solutions in each language, every hidden test counted, and fail with a wrong one', async () => {
    const task = (id: string) => (TASKS as Task[]).find((t) => t.id === id)!;
    const good: Array<[string, Files, number]> = [
      ['python/second_largest', [{ path: 'solution.py', content: 'def second_largest(xs):\n    d = sorted(set(xs), reverse=True)\n    return d[1] if len(d) > 1 else None\n' }], 11],
      ['typescript/caesar', [{ path: 'solution.ts', content: 'export function caesar(s: string, k: number): string {\n  return s.replace(/[a-z]/gi, (ch) => { const b = ch <= "Z" ? 65 : 97; return String.fromCharCode(((ch.charCodeAt(0) - b + k) % 26) + b); });\n}\n' }], 10],
      ['c/power_mod', [{ path: 'solution.c', content: 'long long power_mod(long long base, long long exp, long long mod) {\n  long long r = 1 % mod, b = base % mod;\n  while (exp > 0) { if (exp & 1) r = (r * b) % mod; b = (b * b) % mod; exp >>= 1; }\n  return r;\n}\n' }], 11],
    ];
    const results = await Promise.all(good.map(([id, files]) => run(task(id), files)));
    results.forEach((v, i) => {
      expect(v.status, `${good[i]![0]}: ${JSON.stringify(v).slice(0, 800)}`).toBe('passed');
      // pytest and node --test count each hidden test; the C harness is one program (its CHECKs counted in eval-task-sets.test.ts).
      if (!good[i]![0].startsWith('c/')) expect(v.tests, good[i]![0]).toMatchObject({ passed: good[i]![2], failed: 0 });
    });
    const wrong = await run(task('python/second_largest'), [{ path: 'solution.py', content: 'def second_largest(xs):\n    d = sorted(xs, reverse=True)\n    return d[1] if len(d) > 1 else None\n' }]);
    expect(wrong.status).toBe('failed');
  }, 180_000);
});
