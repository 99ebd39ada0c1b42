/**
 * countTests on the runners' real outputs: a runner that says it ran no test counts 0 (the verification then
 * says `failed`, no test ran), one whose output cannot be counted keeps the 1-per-check fallback, and an
 * output cut to the kept tail does not make earlier summaries look like "no tests".
 */
import { describe, expect, it } from 'vitest';
import { countTests } from './recipes.js';
import type { CheckRun } from './sandbox-runner.js';

const run = (output: string, exit_code: number | null = 0): CheckRun => ({ name: 'test', command: 'x', exit_code, duration_ms: 1, output });

describe('countTests', () => {
  it('a runner that found no test counts zero', () => {
    const none: Array<[string, string, number]> = [
      ['node --test', 'TAP version 13\n1..0\n# tests 0\n# suites 0\n# pass 0\n# fail 0\n# cancelled 0\n# skipped 0\n# todo 0\n# duration_ms 3.8\n', 0],
      ['unittest', '\n----------------------------------------------------------------------\nRan 0 tests in 0.000s\n\nOK\n', 0],
      ['unittest (3.12+)', '\n----------------------------------------------------------------------\nRan 0 tests in 0.000s\n\nNO TESTS RAN\n', 5],
      ['pytest -q', '\nno tests ran in 0.74s\n', 5],
      ['pytest', '============================= no tests ran in 0.01s =============================\n', 5],
      ['cargo', 'running 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n   Doc-tests adder\n\nrunning 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n', 0],
      ['vitest', 'No test files found, exiting with code 1\n', 1],
      ['go', 'testing: warning: no tests to run\nPASS\nok  \texample.com/generated\t0.002s [no tests to run]\n', 0],
      ['ctest', 'Test project /tmp/build\nNo tests were found!!!\n', 0],
    ];
    for (const [name, output, exit] of none) expect(countTests(run(output, exit)), name).toEqual({ passed: 0, failed: 0 });
  });

  it('counted runs keep their counts', () => {
    expect(countTests(run('# tests 2\n# pass 2\n# fail 0\n'))).toEqual({ passed: 2, failed: 0 });
    expect(countTests(run('test result: ok. 3 passed; 0 failed;\n   Doc-tests x\ntest result: ok. 0 passed; 0 failed;\n'))).toEqual({ passed: 3, failed: 0 });
    expect(countTests(run('..F\n1 failed, 2 passed in 0.03s\n', 1))).toEqual({ passed: 2, failed: 1 });
    expect(countTests(run('Ran 3 tests in 0.001s\n\nFAILED (failures=1)\n', 1))).toEqual({ passed: 2, failed: 1 });
  });

  it('an output that cannot be counted is one test per check, never "none"', () => {
    expect(countTests(run('ok\n'))).toEqual({ passed: 1, failed: 0 });
    expect(countTests(run('Assertion failed\n', 134))).toEqual({ passed: 0, failed: 1 });
    // go: one package without tests next to one whose tests ran is not "no tests".
    const go = '=== RUN   TestAdd\n--- PASS: TestAdd (0.00s)\nPASS\nok  \texample.com/a\t0.002s\n?   \texample.com/b\t[no test files]\n';
    expect(countTests(run(go))).toEqual({ passed: 1, failed: 0 });
  });

  it('an output as long as the kept tail may have lost its earlier summaries: its "no tests" lines are not believed', () => {
    const tail = `${'test tests::case ... ok\n'.repeat(400)}test result: ok. 0 passed; 0 failed; 0 ignored;\n`.slice(-8192);
    expect(countTests(run(tail), 8192)).toEqual({ passed: 1, failed: 0 });
    expect(countTests(run(tail))).toEqual({ passed: 0, failed: 0 });
  });
});
