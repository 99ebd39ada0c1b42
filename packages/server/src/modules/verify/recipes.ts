import { lookupTable } from '@codeloom/protocol';
import type { CheckRun, CheckSpec, SandboxFile } from './sandbox-runner.js';
import { SANDBOX_NODE_MODULES, SANDBOX_WORK, type Tool, type Toolchains } from './toolchains.js';

/** How one language is checked: the commands, and how many tests passed and failed by their output. */
export interface Recipe {
  checks: CheckSpec[];
  /** Indexes of the checks that run tests. */
  testChecks: number[];
}

export type RecipeResult = Recipe | { unsupported: string };

const TEST_PATH = /(^|\/)(tests?|__tests__|spec)\/|[._-](test|spec)\.[a-z]+$|(^|\/)test_[^/]+$|_test\.(go|py)$|Test\.java$/;
export const isTestPath = (p: string) => TEST_PATH.test(p);
const paths = (files: SandboxFile[], re: RegExp) => files.map((f) => f.path).filter((p) => re.test(p)).sort();
const content = (files: SandboxFile[], path: string) => files.find((f) => f.path === path)?.content ?? '';
export const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function packageTestScript(files: SandboxFile[]): string | undefined {
  try {
    const pkg = JSON.parse(content(files, 'package.json') || '{}') as { scripts?: Record<string, string> };
    const test = pkg.scripts?.test;
    return test && !/no test specified/.test(test) ? test : undefined;
  } catch { return undefined; }
}

function nodeTests(files: SandboxFile[], ts: boolean, tools: Toolchains): CheckSpec | undefined {
  if (packageTestScript(files)) return { name: 'test', argv: ['npm', 'test', '--silent'] };
  const tests = paths(files, ts ? /\.test\.(m|c)?tsx?$|\.spec\.tsx?$/ : /\.test\.(m|c)?js$|\.spec\.m?js$/);
  if (!tests.length) return undefined;
  if (tests.some((t) => /from ['"]vitest['"]/.test(content(files, t))) && tools.have.vitest) return { name: 'test', argv: ['vitest', 'run', '--reporter=verbose', ...tests] };
  // Without a package.json the files are ES modules (the usual for generated code), as Node would need to be told.
  if (ts) return { name: 'test', argv: ['bash', '-c', `[ -f package.json ] || echo '{"type":"module"}' > package.json; exec node --import ${SANDBOX_NODE_MODULES}/tsx/dist/esm/index.mjs --test "$@"`, 'test', ...tests] };
  return { name: 'test', argv: ['node', '--test', ...tests] };
}

function typescript(files: SandboxFile[], tools: Toolchains): RecipeResult {
  if (!tools.have.tsc) return { unsupported: 'the TypeScript compiler is not installed' };
  const sources = paths(files, /\.(m|c)?tsx?$/);
  if (!sources.length) return { unsupported: 'no TypeScript files' };
  const tsc = `${SANDBOX_NODE_MODULES}/typescript/bin/tsc`;
  const typecheck: CheckSpec = files.some((f) => f.path === 'tsconfig.json')
    ? { name: 'typecheck', argv: ['node', tsc, '--noEmit', '-p', 'tsconfig.json'] }
    : { name: 'typecheck', argv: ['node', tsc, '--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--skipLibCheck', '--types', 'node', ...sources] };
  const test = nodeTests(files, true, tools);
  return { checks: [typecheck, ...(test ? [test] : [])], testChecks: test ? [1] : [] };
}

function javascript(files: SandboxFile[], tools: Toolchains): RecipeResult {
  const sources = paths(files, /\.(m|c)?js$/);
  if (!sources.length) return { unsupported: 'no JavaScript files' };
  const test = nodeTests(files, false, tools);
  return { checks: [{ name: 'syntax', argv: ['bash', '-c', 'for f in "$@"; do node --check "$f" || exit 1; done', 'check', ...sources] }, ...(test ? [test] : [])], testChecks: test ? [1] : [] };
}

function python(files: SandboxFile[], tools: Toolchains): RecipeResult {
  if (!tools.have.python) return { unsupported: 'python3 is not installed' };
  const sources = paths(files, /\.py$/);
  if (!sources.length) return { unsupported: 'no Python files' };
  const checks: CheckSpec[] = [{ name: 'compile', argv: ['python3', '-m', 'py_compile', ...sources] }];
  if (sources.some(isTestPath)) {
    const usesPytest = files.some((f) => /^\s*(import pytest|from pytest)/m.test(f.content)) || !files.some((f) => /unittest/.test(f.content));
    checks.push(tools.have.pytest && usesPytest
      ? { name: 'test', argv: ['python3', '-m', 'pytest', '-q', '-p', 'no:cacheprovider'] }
      : unittestCheck(sources));
  }
  return { checks, testChecks: checks.length > 1 ? [1] : [] };
}

/**
 * `unittest discover` over tests/ (else the whole tree). A tests/ folder without __init__.py is not importable from
 * the top, so it is its own top, with the project root on PYTHONPATH for the imports of the code under test.
 */
function unittestCheck(sources: string[]): CheckSpec {
  const base = ['python3', '-m', 'unittest', 'discover', '-v'];
  if (!sources.some((s) => s.startsWith('tests/'))) return { name: 'test', argv: [...base, '-s', '.', '-t', '.', '-p', '*test*.py'] };
  if (sources.includes('tests/__init__.py')) return { name: 'test', argv: [...base, '-s', 'tests', '-t', '.', '-p', '*test*.py'] };
  return { name: 'test', argv: [...base, '-s', 'tests', '-t', 'tests', '-p', '*test*.py'], env: { PYTHONPATH: SANDBOX_WORK } };
}

function rust(files: SandboxFile[], tools: Toolchains): RecipeResult {
  if (files.some((f) => f.path === 'Cargo.toml')) {
    if (!tools.have.cargo) return { unsupported: 'cargo is not installed' };
    return { checks: [{ name: 'test', argv: ['cargo', 'test', '--offline', '--color', 'never'] }], testChecks: [0] };
  }
  if (!tools.have.rustc) return { unsupported: 'rustc is not installed' };
  const root = paths(files, /(^|\/)(main|lib)\.rs$/)[0] ?? paths(files, /\.rs$/)[0];
  if (!root) return { unsupported: 'no Rust files' };
  return { checks: [{ name: 'build', argv: ['rustc', '--edition', '2021', '--test', '-o', '/tmp/unit', root] }, { name: 'test', argv: ['/tmp/unit'] }], testChecks: [1] };
}

function native(files: SandboxFile[], tools: Toolchains, cpp: boolean): RecipeResult {
  const compiler = cpp ? 'g++' : 'gcc';
  if (!tools.have[cpp ? 'gpp' : 'gcc']) return { unsupported: `${compiler} is not installed` };
  if (files.some((f) => f.path === 'Makefile' || f.path === 'makefile') && tools.have.make) {
    const mk = content(files, 'Makefile') || content(files, 'makefile');
    const hasTest = /^(test|check)\s*:/m.test(mk);
    const target = /^test\s*:/m.test(mk) ? 'test' : 'check';
    return { checks: [{ name: 'build', argv: ['make'] }, ...(hasTest ? [{ name: 'test', argv: ['make', target] }] : [])], testChecks: hasTest ? [1] : [] };
  }
  if (files.some((f) => f.path === 'CMakeLists.txt') && tools.have.cmake) {
    return {
      checks: [
        { name: 'configure', argv: ['cmake', '-S', '.', '-B', '/tmp/build'] },
        { name: 'build', argv: ['cmake', '--build', '/tmp/build'] },
        { name: 'test', argv: ['ctest', '--test-dir', '/tmp/build', '--output-on-failure'] },
      ],
      testChecks: [2],
    };
  }
  // No build file: every non-test source compiled and linked; each test linked with the sources but the one holding main().
  const ext = cpp ? /\.(cpp|cc|cxx)$/ : /\.c$/;
  const sources = paths(files, ext);
  if (!sources.length) return { unsupported: `no ${cpp ? 'C++' : 'C'} files` };
  const std = cpp ? '-std=c++17' : '-std=c11';
  const include = files.some((f) => f.path.startsWith('src/')) ? '-Isrc' : '-I.';
  const program = sources.filter((s) => !isTestPath(s));
  const withMain = (p: string) => /\bint\s+main\s*\(/.test(content(files, p));
  const lib = program.filter((p) => !withMain(p));
  const tests = sources.filter(isTestPath);
  const checks: CheckSpec[] = !program.length ? [] : [{
    name: 'build',
    argv: program.some(withMain) ? [compiler, std, '-Wall', include, '-o', '/tmp/app', ...program] : [compiler, std, '-Wall', include, '-fsyntax-only', ...program],
  }];
  tests.forEach((t, i) => {
    checks.push({ name: `test ${t}`, argv: ['bash', '-c', `${[compiler, std, include, '-o', `/tmp/test${i}`, t, ...lib].map(quote).join(' ')} && /tmp/test${i}`], optional: true });
  });
  return { checks, testChecks: checks.map((c, i) => (c.name.startsWith('test ') ? i : -1)).filter((i) => i >= 0) };
}

function java(files: SandboxFile[], tools: Toolchains): RecipeResult {
  if (!tools.have.javac) return { unsupported: 'javac is not installed' };
  const sources = paths(files, /\.java$/);
  if (!sources.length) return { unsupported: 'no Java files' };
  const checks: CheckSpec[] = [{ name: 'compile', argv: ['javac', '-d', '/tmp/classes', ...sources] }];
  for (const t of sources.filter((s) => /Test\.java$/.test(s))) {
    const pkg = /^package\s+([\w.]+);/m.exec(content(files, t))?.[1];
    const cls = t.split('/').pop()!.replace(/\.java$/, '');
    checks.push({ name: `test ${cls}`, argv: ['java', '-ea', '-cp', '/tmp/classes', pkg ? `${pkg}.${cls}` : cls], optional: true });
  }
  return { checks, testChecks: checks.map((_, i) => i).slice(1) };
}

function go(files: SandboxFile[], tools: Toolchains): RecipeResult {
  if (!tools.have.go) return { unsupported: 'Go is not installed' };
  if (!paths(files, /\.go$/).length) return { unsupported: 'no Go files' };
  const hasTests = files.some((f) => f.path.endsWith('_test.go'));
  const init: CheckSpec[] = files.some((f) => f.path === 'go.mod') ? [] : [{ name: 'init', argv: ['go', 'mod', 'init', 'example.com/generated'] }];
  return { checks: [...init, { name: 'vet', argv: ['go', 'vet', './...'] }, ...(hasTests ? [{ name: 'test', argv: ['go', 'test', '-v', './...'] }] : [])], testChecks: hasTests ? [init.length + 1] : [] };
}

function bash(files: SandboxFile[], tools: Toolchains): RecipeResult {
  if (!tools.have.bash) return { unsupported: 'bash is not installed' };
  const scripts = paths(files, /\.(sh|bash)$/);
  if (!scripts.length) return { unsupported: 'no shell scripts' };
  const checks: CheckSpec[] = [{ name: 'syntax', argv: ['bash', '-c', 'for f in "$@"; do bash -n "$f" || exit 1; done', 'check', ...scripts] }];
  for (const t of scripts.filter(isTestPath)) checks.push({ name: `test ${t}`, argv: ['bash', t], optional: true });
  return { checks, testChecks: checks.map((_, i) => i).slice(1) };
}

const RECIPES = lookupTable<(files: SandboxFile[], tools: Toolchains) => RecipeResult>({
  typescript, javascript, python, rust, java, go, bash,
  c: (f, t) => native(f, t, false),
  cpp: (f, t) => native(f, t, true),
});

/** The checks for a language's files, or why they cannot be checked here. */
export function recipeFor(language: string, files: SandboxFile[], tools: Toolchains): RecipeResult {
  const recipe = RECIPES[language];
  if (!recipe) return { unsupported: `no checks are defined for ${language}` };
  if (!files.length) return { unsupported: 'the answer holds no files' };
  return recipe(files, tools);
}

export const SUPPORTED_LANGUAGES = Object.keys(RECIPES);

const NEEDS = lookupTable<[Tool[], string]>({
  typescript: [['tsc'], 'the TypeScript compiler'], javascript: [['node'], 'node'], python: [['python'], 'python3'], rust: [['cargo', 'rustc'], 'cargo or rustc'],
  c: [['gcc'], 'gcc'], cpp: [['gpp'], 'g++'], java: [['javac'], 'javac and java'], go: [['go'], 'Go'], bash: [['bash'], 'bash'],
});

/** Why a language cannot be verified here (no recipe, or its toolchain is missing), or undefined when it can. */
export function unsupportedReason(language: string, tools: Toolchains): string | undefined {
  const need = NEEDS[language];
  if (!need) return `no checks are defined for ${language}`;
  return need[0].some((t) => tools.have[t]) ? undefined : `${need[1]} is not installed`;
}
export type { Tool };

const num = (re: RegExp, text: string) => { let n = 0; for (const m of text.matchAll(re)) n += Number(m[1]); return n; };

/**
 * What a test runner prints when it ran no test at all (found no file, or files without a test), each only
 * consulted when the summary lines above count nothing: node --test (`# tests 0`), cargo / rustc --test
 * (every `test result:` at 0), pytest (`no tests ran`, exit 5), unittest (`Ran 0 tests`), vitest (`No test
 * files found`), go test (`no tests to run`, `[no test files]`), ctest (`No tests were found`).
 */
const NO_TESTS = [/^# tests 0\s*$/m, /test result: \w+\. 0 passed; 0 failed/, /^=*\s*no tests ran\b/m, /^Ran 0 tests\b/m, /No test files found/, /No tests were found/];
/** go test -v: a package without tests says so even when another package's tests ran (their `=== RUN` / `--- PASS` lines). */
const GO_NO_TESTS = /\bno tests to run\b|\[no test files\]/;
const GO_RAN = /^\s*(?:=== RUN|--- (?:PASS|FAIL|SKIP):)/m;
const saysNoTests = (out: string) => NO_TESTS.some((re) => re.test(out)) || (GO_NO_TESTS.test(out) && !GO_RAN.test(out));

/**
 * Test counts read from a test check's output, by the runners' own summary lines; `{0, 0}` when the runner
 * says it ran none; else (a runner whose output says neither, e.g. one test program) 1 pass/fail per check.
 * `outputTail` is the most output a check keeps: an output that long may have lost earlier summaries
 * (cargo prints one per test binary), so its "no tests" lines are not believed.
 */
export function countTests(run: CheckRun, outputTail = Infinity): { passed: number; failed: number } {
  const out = run.output;
  const patterns: Array<[RegExp, RegExp]> = [
    [/^# pass (\d+)/gm, /^# fail (\d+)/gm], // node --test
    [/test result: \w+\. (\d+) passed/g, /test result: \w+\. \d+ passed; (\d+) failed/g], // cargo / rustc --test
    [/Tests\s+(?:\d+ failed \| )?(\d+) passed/g, /Tests\s+(\d+) failed/g], // vitest
    [/(\d+) passed/g, /(\d+) (?:failed|error)/g], // pytest
  ];
  for (const [pass, fail] of patterns) {
    const passed = num(pass, out);
    const failed = num(fail, out);
    if (passed || failed) return { passed, failed };
  }
  const ran = /^Ran (\d+) tests?/m.exec(out);
  if (ran) {
    const bad = num(/(?:failures|errors)=(\d+)/g, out);
    return { passed: Number(ran[1]) - bad, failed: bad };
  }
  if (run.skipped || (out.length < outputTail && saysNoTests(out))) return { passed: 0, failed: 0 };
  return run.exit_code === 0 ? { passed: 1, failed: 0 } : { passed: 0, failed: 1 };
}
