/**
 * The recipes per language, in the real sandbox with the toolchains on this machine: a tiny known-good
 * project passes with its test counts, a known-bad one fails with the failing output. Languages whose
 * toolchain is missing are `unsupported` (and their cases say so). All cases start at once up front.
 */
import type { GeneratedFile, VerificationAttempt } from '@codeloom/protocol';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/load-config.js';
import { VerificationService } from './verification-service.js';

const service = new VerificationService(loadConfig({ CODELOOM_VERIFY_CONCURRENCY: '2', CODELOOM_VERIFY_TIMEOUT: '90' }));
const status = await service.status();
if (!status.available) console.log(`skipping the recipe tests: ${status.reason}`);
const have = (await service.toolchains()).have;

const f = (path: string, content: string): GeneratedFile => ({ path, content });

const NODE_TEST = (imp: string) => `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { add } from '${imp}';\ntest('adds', () => { assert.equal(add(2, 3), 5); });\ntest('adds negatives', () => { assert.equal(add(-2, -3), -5); });\n`;

interface Case { language: string; tool: boolean; files: GeneratedFile[]; expect: 'passed' | 'failed' | 'unsupported'; tests?: { passed: number; failed: number }; output?: RegExp }

const CASES: Record<string, Case> = {
  'typescript good': {
    language: 'typescript', tool: have.tsc, expect: 'passed', tests: { passed: 2, failed: 0 },
    files: [
      f('tsconfig.json', JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, allowImportingTsExtensions: true, types: ['node'] }, include: ['src', 'test'] })),
      f('src/add.ts', 'export function add(a: number, b: number): number { return a + b; }\n'),
      f('test/add.test.ts', NODE_TEST('../src/add.ts')),
    ],
  },
  'typescript type error': {
    language: 'typescript', tool: have.tsc, expect: 'failed', output: /TS2322|not assignable/,
    files: [f('src/add.ts', 'export function add(a: number, b: number): number { return `${a}${b}`; }\n')],
  },
  'javascript good (package test script)': {
    language: 'javascript', tool: true, expect: 'passed', tests: { passed: 2, failed: 0 },
    files: [
      f('package.json', JSON.stringify({ name: 'adder', type: 'module', scripts: { test: 'node --test' } })),
      f('src/add.js', 'export const add = (a, b) => a + b;\n'),
      f('test/add.test.js', NODE_TEST('../src/add.js')),
    ],
  },
  'javascript failing test': {
    language: 'javascript', tool: true, expect: 'failed', tests: { passed: 1, failed: 1 }, output: /Expected values to be strictly equal|-5/,
    files: [f('add.js', 'export const add = (a, b) => (a < 0 ? a - b + 1 : a + b);\n'), f('add.test.js', NODE_TEST('./add.js'))],
  },
  'python good': {
    language: 'python', tool: have.python, expect: 'passed', tests: { passed: 2, failed: 0 },
    files: [f('calc.py', 'def add(a, b):\n    return a + b\n'), f('tests/test_calc.py', 'from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n\ndef test_neg():\n    assert add(-2, -3) == -5\n')],
  },
  'python failing test': {
    language: 'python', tool: have.python, expect: 'failed', tests: { passed: 1, failed: 1 }, output: /assert -4 == -5|AssertionError/,
    files: [f('calc.py', 'def add(a, b):\n    return a + b if a > 0 else a - b + 1\n'), f('tests/test_calc.py', 'from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n\ndef test_neg():\n    assert add(-2, -3) == -5\n')],
  },
  'python unittest in tests/ without __init__.py': {
    language: 'python', tool: have.python, expect: 'passed', tests: { passed: 2, failed: 0 },
    files: [f('calc.py', 'def add(a, b):\n    return a + b\n'), f('tests/test_calc.py', 'import unittest\nfrom calc import add\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n    def test_neg(self):\n        self.assertEqual(add(-2, -3), -5)\n')],
  },
  'python unittest in a tests package': {
    language: 'python', tool: have.python, expect: 'failed', tests: { passed: 1, failed: 1 },
    files: [f('calc.py', 'def add(a, b):\n    return a + b if a > 0 else a - b + 1\n'), f('tests/__init__.py', ''), f('tests/test_calc.py', 'import unittest\nfrom calc import add\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n    def test_neg(self):\n        self.assertEqual(add(-2, -3), -5)\n')],
  },
  'python syntax error': {
    language: 'python', tool: have.python, expect: 'failed', output: /SyntaxError/,
    files: [f('calc.py', 'def add(a, b)\n    return a + b\n')],
  },
  'rust good (cargo)': {
    language: 'rust', tool: have.cargo, expect: 'passed', tests: { passed: 1, failed: 0 },
    files: [f('Cargo.toml', '[package]\nname = "adder"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'), f('src/lib.rs', 'pub fn add(a: i32, b: i32) -> i32 { a + b }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() { assert_eq!(super::add(2, 3), 5); }\n}\n')],
  },
  'rust failing test (rustc)': {
    language: 'rust', tool: have.rustc, expect: 'failed', tests: { passed: 0, failed: 1 }, output: /assertion `left == right` failed|panicked/,
    files: [f('src/lib.rs', 'pub fn add(a: i32, b: i32) -> i32 { a - b }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() { assert_eq!(super::add(2, 3), 5); }\n}\n')],
  },
  'c good': {
    language: 'c', tool: have.gcc, expect: 'passed', tests: { passed: 1, failed: 0 },
    files: [f('src/add.h', 'int add(int a, int b);\n'), f('src/add.c', '#include "add.h"\nint add(int a, int b) { return a + b; }\n'), f('tests/test_add.c', '#include <assert.h>\n#include "add.h"\nint main(void) { assert(add(2, 3) == 5); return 0; }\n')],
  },
  'c compile error': {
    language: 'c', tool: have.gcc, expect: 'failed', output: /error/,
    files: [f('src/add.c', 'int add(int a, int b) { return a + ; }\n')],
  },
  'cpp good (Makefile)': {
    language: 'cpp', tool: have.gpp && have.make, expect: 'passed', tests: { passed: 1, failed: 0 },
    files: [f('Makefile', 'all: app\napp: main.cpp\n\tg++ -std=c++17 -o app main.cpp\ntest: app\n\t./app\n'), f('main.cpp', '#include <iostream>\nint main() { std::cout << "ok" << std::endl; return 0; }\n')],
  },
  'java good': {
    language: 'java', tool: have.javac, expect: 'passed', tests: { passed: 1, failed: 0 },
    files: [f('src/Add.java', 'public class Add { public static int add(int a, int b) { return a + b; } }\n'), f('src/AddTest.java', 'public class AddTest { public static void main(String[] a) { if (Add.add(2, 3) != 5) throw new AssertionError("add"); System.out.println("ok"); } }\n')],
  },
  'java compile error': {
    language: 'java', tool: have.javac, expect: 'failed', output: /error/,
    files: [f('src/Add.java', 'public class Add { public static int add(int a, int b) { return a + b } }\n')],
  },
  'bash good': {
    language: 'bash', tool: have.bash, expect: 'passed', tests: { passed: 1, failed: 0 },
    files: [f('greet.sh', '#!/usr/bin/env bash\necho "hello $1"\n'), f('tests/greet_test.sh', '#!/usr/bin/env bash\nset -e\n[ "$(bash greet.sh ada)" = "hello ada" ]\n')],
  },
  'bash syntax error': {
    language: 'bash', tool: have.bash, expect: 'failed', output: /syntax error/,
    files: [f('greet.sh', 'if [ -n "$1" ]; then echo hi\n')],
  },
  'ruby: no recipe': { language: 'ruby', tool: true, expect: 'unsupported', files: [f('a.rb', 'puts 1\n')] },
};

const results = new Map<string, Promise<VerificationAttempt>>();
beforeAll(() => {
  if (!status.available) return;
  for (const [name, c] of Object.entries(CASES)) results.set(name, service.verify(c.language, c.files, { attempt: 1 }));
});

describe.skipIf(!status.available)('recipes in the sandbox', () => {
  for (const [name, c] of Object.entries(CASES)) {
    it.skipIf(!c.tool)(name, async () => {
      const r = await results.get(name)!;
      const report = JSON.stringify(r.checks.map((x) => ({ ...x, output: x.output.slice(-1500) })), null, 1);
      expect(r.status, report).toBe(c.expect);
      if (c.tests) expect(r.tests, report).toEqual(c.tests);
      if (c.output) expect(r.checks.map((x) => x.output).join('\n'), report).toMatch(c.output);
    }, 120_000);
  }

  it('a language whose toolchain is missing is unsupported (Go here)', async () => {
    if (have.go) return;
    const r = await service.verify('go', [f('main.go', 'package main\nfunc main() {}\n')], { attempt: 1 });
    expect(r).toMatchObject({ status: 'unsupported', reason: 'Go is not installed' });
  });
});
