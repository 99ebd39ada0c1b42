/**
 * The sandbox model's projects, checked with the real toolchains on this
 * machine: every generated file must compile (or at least parse) and every
 * generated test must pass. Toolchains that are missing skip their suite and
 * say why. Projects are written under <repo>/.test-output (git-ignored) so
 * that imports like 'fastify' resolve from the repository's node_modules.
 *
 * All projects are generated and checked up front through a small pool (one
 * job per core, at least two), and each test awaits its own result, so the
 * whole file stays well under a minute on two cores.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GeneratedFile, RunStep } from '@codeloom/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFencedFiles } from '../../modules/generate/parse-fenced-files.js';
import { buildAgentMessages } from '../../modules/runs/agent-prompts.js';
import type { ChatMessage } from '../provider.js';
import { createSandboxProvider } from './sandbox-provider.js';

const ROOT = fileURLToPath(new URL('../../../../../', import.meta.url));
const TSC = join(ROOT, 'node_modules/.bin/tsc');
const sandbox = createSandboxProvider();

// ---------------------------------------------------------------- toolchains

function have(tool: string): boolean {
  return spawnSync('bash', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status === 0;
}

const TOOLS = {
  node: true, // vitest itself runs on node
  tsc: existsSync(TSC),
  python3: have('python3'),
  javac: have('javac') && have('java'),
  gcc: have('gcc'),
  gpp: have('g++'),
  rustc: have('rustc'),
  bash: have('bash'),
  go: have('go'),
  sqlite3: have('sqlite3'),
};
const resolvable = (pkg: string) => { try { createRequire(join(ROOT, 'package.json')).resolve(pkg); return true; } catch { return false; } };
const HAVE_EXPRESS = resolvable('express');

/** describe, or describe.skip with a line saying which toolchain is missing. */
function describeWith(available: boolean, tool: string, name: string, body: () => void) {
  if (!available) console.log(`skipping "${name}": ${tool} is not installed on this machine`);
  describe.skipIf(!available)(name, body);
}

// ---------------------------------------------------------------- processes and the pool

interface Step { cmd: string; code: number | null; out: string; ms?: number }

const timings: Array<[string, number]> = [];

const CHILD_ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_OPTIONS' && !k.startsWith('VITEST')));

function exec(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}, timeoutMs = 60_000): Promise<Step> {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(cmd, args, { cwd, env: { ...CHILD_ENV, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    const timer = setTimeout(() => { out += `\n[killed after ${timeoutMs} ms]`; child.kill('SIGKILL'); }, timeoutMs);
    child.on('error', (e) => { clearTimeout(timer); resolve({ cmd: [cmd, ...args].join(' '), code: -1, out: String(e) }); });
    child.on('close', (code) => {
      clearTimeout(timer);
      timings.push([`${relative(WORK, cwd)}: ${[cmd, ...args].join(' ').slice(0, 80)}`, Date.now() - started]);
      resolve({ cmd: [cmd, ...args].join(' '), code, out: out.slice(-6000) });
    });
  });
}

const POOL_SIZE = Math.max(2, Math.min(4, availableParallelism()));
let active = 0;
const waiting: Array<() => void> = [];
async function pooled<T>(job: () => Promise<T>): Promise<T> {
  if (active >= POOL_SIZE) await new Promise<void>((resolve) => waiting.push(resolve));
  active++;
  try {
    return await job();
  } finally {
    active--;
    waiting.shift()?.();
  }
}

// ---------------------------------------------------------------- projects

let WORK = '';
let failures = 0;

interface Project { dir: string; files: GeneratedFile[]; text: string }

async function generate(language: string, prompt: string, context: Record<string, string | boolean>, agentType?: string): Promise<string> {
  const messages: ChatMessage[] = [{ role: 'user', content: prompt }];
  return (await sandbox.generate({ model: 'sandbox', messages, hints: { language, context, ...(agentType ? { agentType } : {}) } })).text;
}

function writeProject(name: string, files: GeneratedFile[]): string {
  const dir = join(WORK, name);
  for (const f of files) {
    mkdirSync(dirname(join(dir, f.path)), { recursive: true });
    writeFileSync(join(dir, f.path), f.content, { mode: f.path.endsWith('.sh') ? 0o755 : 0o644 });
  }
  return dir;
}

const by = (files: GeneratedFile[], re: RegExp) => files.map((f) => f.path).filter((p) => re.test(p)).sort();
const TEST_PATH = /(^|\/)(tests?|__tests__|spec)\/|[._-](test|spec)\.[a-z]+$|(^|\/)test_[^/]+$|Test\.java$/;
const isTest = (path: string) => TEST_PATH.test(path);

/** What one case checked: the steps, and (for the test) what must hold; `untestable` says why its tests could not run here. */
interface Outcome { project: Project; steps: Step[]; notes: string[]; testsRan: number; untestable?: string }

type Checker = (p: Project) => Promise<Omit<Outcome, 'project'>>;

/** Runs steps in order and stops at the first failure. */
async function sequence(dir: string, commands: Array<[string, string[], Record<string, string>?]>): Promise<Step[]> {
  const steps: Step[] = [];
  for (const [cmd, args, env] of commands) {
    const step = await pooled(() => exec(cmd, args, dir, env));
    steps.push(step);
    if (step.code !== 0) break;
  }
  return steps;
}

// ---------------------------------------------------------------- per-language checks

/** A typed stand-in for express (not installed here): enough API for a router and an app, so the rest still type-checks. */
const EXPRESS_SHIM = `declare module 'express' {
  export interface Request { params: Record<string, string>; query: Record<string, unknown>; body?: any }
  export interface Response { json(body?: unknown): this; status(code: number): this; send(body?: unknown): this; end(): this; sendStatus(code: number): this }
  export type NextFunction = (err?: unknown) => void;
  export type Handler = (req: Request, res: Response, next: NextFunction) => unknown;
  export interface Router {
    get(path: string, ...handlers: Handler[]): this; post(path: string, ...handlers: Handler[]): this;
    put(path: string, ...handlers: Handler[]): this; patch(path: string, ...handlers: Handler[]): this;
    delete(path: string, ...handlers: Handler[]): this; use(...args: unknown[]): this;
  }
  export function Router(): Router;
  export interface Express extends Router {
    listen(port: number, hostname: string, cb?: () => void): import('node:http').Server;
    listen(port: number, cb?: () => void): import('node:http').Server;
    (req: unknown, res: unknown): void;
  }
  interface ExpressFactory { (): Express; json(): Handler; Router: typeof Router }
  const express: ExpressFactory;
  export default express;
}
`;

function tsOutDir(dir: string): string {
  const config = JSON.parse(readFileSync(join(dir, 'tsconfig.json'), 'utf8')) as { compilerOptions?: { outDir?: string } };
  return config.compilerOptions?.outDir ?? '.';
}

function walk(dir: string, re: RegExp): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((p) => re.test(p) && !p.includes('node_modules')).map((p) => join(dir, p)).sort();
}

const checkTypeScript: Checker = async ({ dir, files }) => {
  const notes: string[] = [];
  expect(by(files, /^tsconfig\.json$/), 'a TypeScript project has a tsconfig.json').toEqual(['tsconfig.json']);
  let project = 'tsconfig.json';
  if (!HAVE_EXPRESS && files.some((f) => /from ['"]express['"]/.test(f.content))) {
    notes.push('express is not installed: type-checked against a small typed express stand-in instead of @types/express');
    writeFileSync(join(dir, 'express-shim.d.ts'), EXPRESS_SHIM);
    const base = JSON.parse(readFileSync(join(dir, 'tsconfig.json'), 'utf8')) as { include?: string[] };
    writeFileSync(join(dir, 'tsconfig.check.json'), JSON.stringify({ extends: './tsconfig.json', files: ['express-shim.d.ts'], include: base.include ?? ['**/*.ts'] }));
    project = 'tsconfig.check.json';
  }
  const steps = await sequence(dir, [[TSC, ['-p', project]]]);
  let testsRan = 0;
  const untestable = project === 'tsconfig.check.json' ? 'express is not installed, so its tests were type-checked but not run' : undefined;
  if (steps.at(-1)!.code === 0 && !untestable) {
    const tests = walk(join(dir, tsOutDir(dir)), /\.test\.m?js$/);
    if (tests.length) {
      const run = await pooled(() => exec(process.execPath, ['--test', ...tests.map((t) => relative(dir, t))], dir));
      steps.push(run);
      testsRan = Number(/^# pass (\d+)/m.exec(run.out)?.[1] ?? 0);
    }
  }
  return { steps, notes, testsRan, ...(untestable ? { untestable } : {}) };
};

const checkJavaScript: Checker = async ({ dir, files }) => {
  const sources = by(files, /\.(m?js|cjs)$/);
  expect(sources.length).toBeGreaterThan(0);
  const steps = await sequence(dir, sources.map((s) => [process.execPath, ['--check', s]] as [string, string[]]));
  let testsRan = 0;
  const tests = sources.filter((s) => /\.test\.m?js$/.test(s));
  const untestable = !HAVE_EXPRESS && files.some((f) => /from ['"]express['"]/.test(f.content)) ? 'express is not installed, so the JavaScript was only checked with node --check' : undefined;
  if (steps.every((s) => s.code === 0) && tests.length && !untestable) {
    const run = await pooled(() => exec(process.execPath, ['--test', ...tests], dir));
    steps.push(run);
    testsRan = Number(/^# pass (\d+)/m.exec(run.out)?.[1] ?? 0);
  }
  return { steps, notes: [], testsRan, ...(untestable ? { untestable } : {}) };
};

const checkPython: Checker = async ({ dir, files }) => {
  const sources = by(files, /\.py$/);
  expect(sources.length).toBeGreaterThan(0);
  const steps = await sequence(dir, [['python3', ['-m', 'py_compile', ...sources], { PYTHONDONTWRITEBYTECODE: '1', PYTHONPYCACHEPREFIX: join(dir, '.pycache') }]]);
  let testsRan = 0;
  if (steps[0]!.code === 0 && sources.some(isTest)) {
    const start = existsSync(join(dir, 'tests')) ? 'tests' : '.';
    const run = await pooled(() => exec('python3', ['-m', 'unittest', 'discover', '-s', start, '-t', '.'], dir, { PYTHONDONTWRITEBYTECODE: '1' }));
    steps.push(run);
    testsRan = Number(/^Ran (\d+) tests?/m.exec(run.out)?.[1] ?? 0);
  }
  return { steps, notes: [], testsRan };
};

const checkJava: Checker = async ({ dir, files }) => {
  const sources = by(files, /\.java$/);
  expect(sources.length).toBeGreaterThan(0);
  const steps = await sequence(dir, [['javac', ['-Xlint:all', '-d', 'out', ...sources]]]);
  let testsRan = 0;
  if (steps[0]!.code === 0) {
    for (const test of sources.filter((s) => /Test\.java$/.test(s))) {
      const content = files.find((f) => f.path === test)!.content;
      const pkg = /^package\s+([\w.]+);/m.exec(content)?.[1];
      const cls = test.split('/').pop()!.replace(/\.java$/, '');
      const run = await pooled(() => exec('java', ['-ea', '-cp', 'out', pkg ? `${pkg}.${cls}` : cls], dir));
      steps.push(run);
      if (run.code === 0) testsRan++;
    }
    const main = sources.map((s) => files.find((f) => f.path === s)!).find((f) => /public static void main/.test(f.content) && !/Test\.java$/.test(f.path));
    if (main && !/ServerSocket|HttpServer|\.start\(\)/.test(main.content)) {
      const pkg = /^package\s+([\w.]+);/m.exec(main.content)?.[1];
      const cls = main.path.split('/').pop()!.replace(/\.java$/, '');
      steps.push(await pooled(() => exec('java', ['-cp', 'out', pkg ? `${pkg}.${cls}` : cls, 'list'], dir)));
    }
  }
  return { steps, notes: [], testsRan };
};

/** C and C++: build the program from every non-test source, then each test with every source but the one holding main(). */
function checkNative(cpp: boolean): Checker {
  return async ({ dir, files }) => {
    const compiler = cpp ? 'g++' : 'gcc';
    // Tests include their headers by name, as the generated Makefile/CMakeLists do with -Isrc.
    const include = existsSync(join(dir, 'src')) ? ['-Isrc'] : [];
    const flags = [...(cpp ? ['-std=c++17'] : ['-std=c11']), '-Wall', '-Wextra', '-Werror', ...include];
    const ext = cpp ? /\.(cpp|cc|cxx)$/ : /\.c$/;
    const sources = by(files, ext);
    const programs = sources.filter((s) => !isTest(s));
    const withMain = (p: string) => /\bint\s+main\s*\(/.test(files.find((f) => f.path === p)!.content);
    const headers = by(files, cpp ? /\.(hpp|hh|h)$/ : /\.h$/);
    expect(programs.length + headers.length, 'some C/C++ source').toBeGreaterThan(0);
    // Every source compiles once to an object; the program and each test link against them (a library has no
    // program; a header-only one is syntax-checked through a file that includes each header).
    const object = (p: string) => `${p.replace(/[/.]/g, '_')}.o`;
    const build: Array<[string, string[]]> = programs.length
      ? [...programs.map((p) => [compiler, [...flags, '-c', '-o', object(p), p]] as [string, string[]]),
        ...(programs.some(withMain) ? [[compiler, ['-o', 'app.bin', ...programs.map(object)]] as [string, string[]]] : [])]
      : headers.map((h) => [compiler, [...flags, '-fsyntax-only', '-x', cpp ? 'c++' : 'c', '-include', h, '/dev/null']] as [string, string[]]);
    const steps = await sequence(dir, build);
    let testsRan = 0;
    if (steps.every((s) => s.code === 0)) {
      const linked = programs.filter((p) => !withMain(p)).map(object);
      for (const [i, test] of sources.filter(isTest).entries()) {
        const built = await sequence(dir, [[compiler, [...flags, '-o', `test${i}.bin`, test, ...linked]], [`./test${i}.bin`, []]]);
        steps.push(...built);
        if (built.every((s) => s.code === 0)) testsRan++;
      }
    }
    return { steps, notes: [], testsRan };
  };
}

const checkRust: Checker = async ({ dir, files }) => {
  const notes: string[] = [];
  const manifest = files.find((f) => f.path === 'Cargo.toml')?.content ?? '';
  const deps = /\[dependencies\]\s*\n([^[]*)/.exec(manifest)?.[1]?.trim();
  if (deps) notes.push(`Cargo.toml has dependencies (${deps.replace(/\s+/g, ' ')}); rustc alone cannot build it`);
  expect(deps ?? '', 'the sandbox keeps Rust projects dependency-free so rustc alone builds them').toBe('');
  const hasLib = files.some((f) => f.path === 'src/lib.rs');
  const hasBin = files.some((f) => f.path === 'src/main.rs');
  expect(hasLib || hasBin, 'a Rust project has src/main.rs or src/lib.rs').toBe(true);
  // As cargo does: the library crate first, the binary linked against it, unit tests from the library (else the binary).
  const type = hasLib ? 'lib' : 'bin';
  const root = hasLib ? 'src/lib.rs' : 'src/main.rs';
  const name = /^name\s*=\s*"([^"]+)"/m.exec(manifest)?.[1]?.replace(/-/g, '_') ?? 'crate';
  const strict = ['--edition', '2021', '-D', 'warnings'];
  const steps = await sequence(dir, [
    ['rustc', [...strict, '--crate-type', type, '--crate-name', name, '-o', type === 'lib' ? `lib${name}.rlib` : 'app.bin', root]],
    ['rustc', [...strict, '--test', '--crate-name', name, '-o', 'unit.bin', root]],
    ['./unit.bin', []],
    ...(hasLib && hasBin ? [['rustc', [...strict, '--crate-type', 'bin', '--extern', `${name}=lib${name}.rlib`, '-L', '.', '-o', 'app.bin', 'src/main.rs']] as [string, string[]]] : []),
  ]);
  let testsRan = Number(/test result: ok\. (\d+) passed/.exec(steps[2]?.out ?? '')?.[1] ?? 0);
  // Integration tests (tests/*.rs) link against the library.
  for (const [i, t] of by(files, /^tests\/[^/]+\.rs$/).entries()) {
    if (type !== 'lib') { notes.push(`${t}: integration tests need a library crate`); continue; }
    const run = await sequence(dir, [['rustc', ['--edition', '2021', '--test', '--extern', `${name}=lib${name}.rlib`, '-L', '.', '-o', `it${i}.bin`, t]], [`./it${i}.bin`, []]]);
    steps.push(...run);
    testsRan += Number(/test result: ok\. (\d+) passed/.exec(run.at(-1)!.out)?.[1] ?? 0);
  }
  return { steps, notes, testsRan };
};

const checkBash: Checker = async ({ dir, files }) => {
  const scripts = by(files, /\.(sh|bash)$/);
  expect(scripts.length).toBeGreaterThan(0);
  const steps = await sequence(dir, scripts.map((s) => ['bash', ['-n', s]] as [string, string[]]));
  let testsRan = 0;
  if (steps.every((s) => s.code === 0)) {
    for (const t of scripts.filter(isTest)) {
      const run = await pooled(() => exec('bash', [t], dir));
      steps.push(run);
      if (run.code === 0) testsRan++;
    }
  }
  return { steps, notes: [], testsRan };
};

const checkGo: Checker = async ({ dir, files }) => {
  const hasTests = files.some((f) => f.path.endsWith('_test.go'));
  const steps = await sequence(dir, [['go', ['vet', './...'], { GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' }], ...(hasTests ? [['go', ['test', './...'], { GOTOOLCHAIN: 'local' }] as [string, string[], Record<string, string>]] : [])]);
  return { steps, notes: [], testsRan: hasTests && steps.at(-1)!.code === 0 ? 1 : 0 };
};

/** The SQL the sandbox writes (its own answer for `sql`, or a db/schema.sql next to a project) must run in SQLite. */
const checkSql: Checker = async ({ dir, files }) => {
  const scripts = by(files, /\.sql$/);
  expect(scripts.length).toBeGreaterThan(0);
  const steps = await sequence(dir, scripts.map((s) => ['sqlite3', [':memory:', `.read ${s}`]] as [string, string[]]));
  // sqlite3 prints errors but may still exit 0 when reading a file; treat any "Error" as a failure.
  for (const s of steps) if (/\bError\b/i.test(s.out)) s.code = s.code || 1;
  return { steps, notes: [], testsRan: 0 };
};

// ---------------------------------------------------------------- cases

interface Case {
  name: string;
  language: string;
  prompt: string;
  context: Record<string, string | boolean>;
  check: Checker;
  /** Names the generated files must carry, from the prompt. */
  expectName: string;
}

const lang = (language: string, check: Checker, rows: Array<[string, Record<string, string | boolean>, string]>, tag = language): Case[] =>
  rows.map(([prompt, context, expectName], i) => ({ name: `${tag} #${i + 1}: "${prompt}" ${JSON.stringify(context)}`, language, prompt, context, check, expectName }));

const CASES: Record<string, Case[]> = {
  typescript: lang('typescript', checkTypeScript, [
    ['REST API for todos', { framework: 'fastify', includeTests: true }, 'todo'],
    ['REST API for books', { framework: 'express', includeTests: true, database: 'sqlite' }, 'book'],
    ['A JSON API that stores user profiles', { includeTests: true }, 'profile'],
    ['CLI to track expenses', { includeTests: true }, 'expense'],
    ['library for parsing invoices', {}, 'invoice'],
    ['library for managing strings', { includeTests: true }, 'string'],
  ]),
  javascript: lang('javascript', checkJavaScript, [
    ['REST API for notes', { includeTests: true }, 'note'],
    ['web service for bookmarks', { framework: 'fastify', includeTests: true }, 'bookmark'],
    ['REST API for orders', { framework: 'express', includeTests: true }, 'order'],
    ['command-line tool to track habits', { includeTests: true }, 'habit'],
    ['library for managing recipes', { includeTests: true }, 'recipe'],
  ]),
  python: lang('python', checkPython, [
    ['REST API for todos', { includeTests: true }, 'todo'],
    ['CLI to track expenses', { includeTests: true }, 'expense'],
    ['library for managing numbers', { includeTests: true }, 'number'],
    ['library for parsing invoices', {}, 'invoice'],
    ['REST API for blog posts', { framework: 'flask', includeTests: true }, 'post'],
  ]),
  java: lang('java', checkJava, [
    ['REST API for todos', { includeTests: true }, 'todo'],
    ['CLI to track expenses', { includeTests: true }, 'expense'],
    ['library for managing maps', {}, 'map'],
  ]),
  c: lang('c', checkNative(false), [
    ['CLI to track expenses', { includeTests: true }, 'expense'],
    ['REST API for todos', { includeTests: true }, 'todo'],
    ['library for managing records', {}, 'record'],
  ]),
  cpp: lang('cpp', checkNative(true), [
    ['library for managing recipes', { includeTests: true }, 'recipe'],
    ['CLI to track expenses', { includeTests: true }, 'expense'],
    ['REST API for classes', {}, 'class'],
  ]),
  rust: lang('rust', checkRust, [
    ['CLI to track expenses', { includeTests: true }, 'expense'],
    ['REST API for todos', { includeTests: true }, 'todo'],
    ['library for managing strings', { includeTests: true }, 'string'],
    ['library for managing options', {}, 'option'],
  ]),
  bash: lang('bash', checkBash, [
    ['script to track expenses', { includeTests: true }, 'expense'],
    ['shell script for todos', { includeTests: true }, 'todo'],
    ['tool for managing bookmarks', {}, 'bookmark'],
  ]),
  go: lang('go', checkGo, [
    ['REST API for todos', { includeTests: true }, 'todo'],
    ['CLI to track expenses', { includeTests: true }, 'expense'],
    ['library for managing strings', {}, 'string'],
  ]),
  sql: lang('sql', checkSql, [
    ['schema for todos', {}, 'todo'],
    ['tables to track expenses', {}, 'expense'],
    ['store orders', {}, 'order'],
  ]),
};

const AVAILABLE: Record<string, [boolean, string]> = {
  typescript: [TOOLS.tsc, `tsc (${TSC})`], javascript: [TOOLS.node, 'node'], python: [TOOLS.python3, 'python3'],
  java: [TOOLS.javac, 'javac/java'], c: [TOOLS.gcc, 'gcc'], cpp: [TOOLS.gpp, 'g++'], rust: [TOOLS.rustc, 'rustc'],
  bash: [TOOLS.bash, 'bash'], go: [TOOLS.go, 'go'], sql: [TOOLS.sqlite3, 'sqlite3'],
};

// ---------------------------------------------------------------- workflows

interface Flow { name: string; language: string; task: string; requirements: Record<string, string>; check: Checker }
const FLOWS: Flow[] = [
  { name: 'typescript workflow', language: 'typescript', task: 'REST API for todos', requirements: { framework: 'fastify', database: 'sqlite' }, check: checkTypeScript },
  { name: 'python workflow', language: 'python', task: 'CLI to track expenses', requirements: {}, check: checkPython },
  { name: 'rust workflow', language: 'rust', task: 'library for managing recipes', requirements: {}, check: checkRust },
  { name: 'bash workflow', language: 'bash', task: 'script to track habits', requirements: {}, check: checkBash },
];
const flowAvailable = (f: Flow) => AVAILABLE[f.language]![0];

/** coder → tester → documenter, each step seeing the earlier outputs exactly as a run does; later files replace earlier ones. */
async function runFlow(flow: Flow): Promise<{ files: GeneratedFile[]; outputs: Record<string, string>; perStep: Record<string, string[]> }> {
  const steps: RunStep[] = [];
  const byPath = new Map<string, GeneratedFile>();
  const outputs: Record<string, string> = {};
  const perStep: Record<string, string[]> = {};
  for (const [index, agent] of (['coder', 'tester', 'documenter'] as const).entries()) {
    const messages = buildAgentMessages(agent, flow.task, flow.requirements, steps, flow.language);
    const { text } = await sandbox.generate({ model: 'sandbox', messages, hints: { agentType: agent, language: flow.language, context: flow.requirements } });
    const files = text.includes('```') ? parseFencedFiles(text, flow.language) : agent === 'documenter' ? [{ path: 'README.md', content: text }] : [];
    for (const f of files) byPath.set(f.path, f);
    outputs[agent] = text;
    perStep[agent] = files.map((f) => f.path);
    steps.push({ index, agent, model: 'sandbox', iteration: 0, status: 'succeeded', output: text, files } as unknown as RunStep);
  }
  return { files: [...byPath.values()], outputs, perStep };
}

// ---------------------------------------------------------------- the suites

const results = new Map<string, Promise<Outcome>>();

function start(key: string, language: string, files: () => Promise<GeneratedFile[]>, check: Checker): void {
  results.set(key, (async () => {
    const generated = await files();
    const dir = writeProject(key.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 60), generated);
    const project = { dir, files: generated, text: '' };
    try {
      return { project, ...(await check(project)) };
    } catch (error) {
      return { project, steps: [{ cmd: `(checking ${language})`, code: -1, out: String(error) }], notes: [], testsRan: 0 };
    }
  })());
}

function report(outcome: Outcome): string {
  return [`in ${outcome.project.dir}`, ...outcome.steps.map((s) => `$ ${s.cmd}  → exit ${s.code}\n${s.out.trim()}`)].join('\n');
}

async function expectClean(key: string, opts: { tests: boolean }): Promise<Outcome> {
  const outcome = await results.get(key)!;
  for (const n of outcome.notes) console.log(`${key}: ${n}`);
  const failed = outcome.steps.find((s) => s.code !== 0);
  if (failed) failures++;
  expect(failed, report(outcome)).toBeUndefined();
  if (opts.tests && outcome.untestable) console.log(`${key}: ${outcome.untestable}`);
  else if (opts.tests) expect(outcome.testsRan, `no generated test ran\n${report(outcome)}`).toBeGreaterThan(0);
  return outcome;
}

beforeAll(() => {
  mkdirSync(join(ROOT, '.test-output'), { recursive: true });
  WORK = mkdtempSync(join(ROOT, '.test-output', 'sandbox-'));
  for (const [language, cases] of Object.entries(CASES)) {
    if (!AVAILABLE[language]![0]) continue;
    for (const c of cases) start(c.name, language, async () => parseFencedFiles(await generate(language, c.prompt, c.context), language), c.check);
  }
  for (const flow of FLOWS.filter(flowAvailable)) start(flow.name, flow.language, async () => (await runFlow(flow)).files, flow.check);
});

afterAll(async () => {
  await Promise.allSettled(results.values());
  if (process.env.SANDBOX_TIMINGS) {
    const total = timings.reduce((n, [, ms]) => n + ms, 0);
    console.log(`${timings.length} toolchain runs, ${total} ms in all; slowest:\n${timings.sort((a, b) => b[1] - a[1]).slice(0, 15).map(([c, ms]) => `${String(ms).padStart(6)} ms  ${c}`).join('\n')}`);
  }
  if (failures === 0 && !process.env.KEEP_SANDBOX_OUTPUT) rmSync(WORK, { recursive: true, force: true });
  else console.log(`sandbox projects kept in ${WORK}`);
});

describe('sandbox projects build and pass their tests with the real toolchains', () => {
  for (const [language, cases] of Object.entries(CASES)) {
    const [available, tool] = AVAILABLE[language]!;
    describeWith(available, tool, language, () => {
      for (const c of cases) {
        it(c.name, async () => {
          const outcome = await expectClean(c.name, { tests: c.context.includeTests === true && language !== 'sql' });
          const { files } = outcome.project;
          // Names come from the prompt.
          expect(files.some((f) => f.path.toLowerCase().replace(/[-_]/g, '').includes(c.expectName) || f.content.toLowerCase().includes(c.expectName)), `files named after "${c.expectName}"`).toBe(true);
          // Without includeTests no test files; with it, at least one (Rust keeps unit tests inside the module).
          const tests = files.filter((f) => isTest(f.path) || /#\[cfg\(test\)\]/.test(f.content));
          if (language !== 'sql') expect(tests.length > 0, `test files when includeTests=${String(c.context.includeTests)}: ${files.map((f) => f.path).join(', ')}`).toBe(c.context.includeTests === true);
          // No nameless blocks: every file got a real path (no main.ts / main2.py fallbacks from a broken fence).
          expect(files.map((f) => f.path).filter((p) => /^main\d*\.[a-z]+$/.test(p) && !files.find((f) => f.path === p)!.content.trim())).toEqual([]);
        }, 120_000);
      }
    });
  }
});

describe('a coder → tester → documenter workflow yields one coherent project', () => {
  for (const flow of FLOWS) {
    const [available, tool] = AVAILABLE[flow.language]!;
    describeWith(available, tool, flow.name, () => {
      it(`${flow.task} (${flow.language}): the union of the files builds and the tester's tests pass`, async () => {
        const outcome = await expectClean(flow.name, { tests: true });
        const { files } = outcome.project;
        const again = await runFlow(flow);
        expect(again.files.map((f) => f.path).sort()).toEqual(files.map((f) => f.path).sort());
        // The tester wrote only tests (or a test-carrying module) and the documenter only the README.
        expect(again.perStep.tester!.length).toBeGreaterThan(0);
        for (const p of again.perStep.tester!) expect(isTest(p) || /#\[cfg\(test\)\]/.test(again.files.find((f) => f.path === p)!.content), `tester file ${p}`).toBe(true);
        expect(again.perStep.documenter).toEqual(['README.md']);
        // The README the documenter wrote is the one in the project, and it mentions every code file.
        const readme = files.find((f) => f.path === 'README.md')!.content;
        expect(again.outputs.documenter).toContain(readme.trim().split('\n')[0]);
        for (const f of files.filter((x) => x.path !== 'README.md')) expect(readme, `README mentions ${f.path}`).toContain(f.path);
      }, 120_000);
    });
  }
});
