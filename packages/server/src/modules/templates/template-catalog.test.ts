import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ProjectTemplate } from './project-template.js';
import { TEMPLATES, findTemplate } from './template-catalog.js';

describe('template catalogue', () => {
  it('has the seven starters across at least three languages, with unique kebab-case ids', () => {
    const ids = TEMPLATES.map((t) => t.id);
    expect(ids).toEqual(expect.arrayContaining(['fastify-api', 'express-api', 'vite-react-app', 'node-cli', 'typescript-library', 'python-package', 'rust-cli']));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
    expect(new Set(TEMPLATES.map((t) => t.language)).size).toBeGreaterThanOrEqual(3);
    for (const t of TEMPLATES) for (const field of [t.name, t.description, t.language]) expect(field.trim(), t.id).not.toBe('');
  });

  it('finds templates by id only', () => {
    expect(findTemplate('fastify-api')?.name).toBe('Fastify API');
    expect(findTemplate('nope')).toBeUndefined();
    expect(findTemplate('Fastify-API')).toBeUndefined();
    expect(findTemplate('')).toBeUndefined();
  });

  it('uses safe, unique, relative file paths', () => {
    for (const t of TEMPLATES) {
      const paths = t.files.map((f) => f.path);
      expect(new Set(paths).size, `${t.id} repeats a path`).toBe(paths.length);
      for (const p of paths) {
        expect(p, `${t.id}: ${p}`).toMatch(/^[\w.@-]+(\/[\w.@-]+)*$/);
        expect(p.split('/').some((seg) => seg === '.' || seg === '..'), `${t.id}: ${p}`).toBe(false);
      }
    }
  });

  it('ships a README, a .gitignore and newline-terminated, non-empty files in every template', () => {
    for (const t of TEMPLATES) {
      const paths = t.files.map((f) => f.path);
      expect(paths, t.id).toContain('README.md');
      expect(paths, t.id).toContain('.gitignore');
      for (const f of t.files) {
        expect(f.content.trim(), `${t.id}: ${f.path}`).not.toBe('');
        expect(f.content.endsWith('\n'), `${t.id}: ${f.path} ends without a newline`).toBe(true);
      }
    }
  });

  it('gives every Node template a valid package.json with a test script', () => {
    for (const t of TEMPLATES) {
      const pkg = t.files.find((f) => f.path === 'package.json');
      if (!pkg) continue;
      const json = JSON.parse(pkg.content) as { name?: string; type?: string; scripts?: Record<string, string> };
      expect(json.name, t.id).toBeTruthy();
      expect(json.type, t.id).toBe('module');
      expect(json.scripts?.test, t.id).toBeTruthy();
    }
  });
});

// ---- Installing and running each template as it is ----

const SKIP_INSTALL = process.env.CODELOOM_SKIP_TEMPLATE_INSTALL === '1';
if (SKIP_INSTALL) console.log('Skipping the template install-and-test checks: CODELOOM_SKIP_TEMPLATE_INSTALL=1.');

// Shared across runs so only the first one downloads packages.
const NPM_CACHE = join(tmpdir(), 'codeloom-template-npm-cache');
const STEP_TIMEOUT_MS = 240_000;

/**
 * The environment a user's shell would have: without this run's vitest and
 * npm variables (NODE_ENV=test, VITEST_*, npm_config_local_prefix, ...), which
 * would otherwise leak into the template's own npm, vite and vitest.
 */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(VITEST|npm_|NODE_ENV$|TEST$|NODE_OPTIONS$|INIT_CWD$)/i.test(key)) continue;
    env[key] = value;
  }
  return { ...env, npm_config_cache: NPM_CACHE, npm_config_update_notifier: 'false', CI: '1', ...extra };
}

interface Step { label: string; cmd: string; args: string[]; env?: Record<string, string> }

class StepFailed extends Error {
  constructor(message: string, readonly dir: string) {
    super(message);
  }
}

function runStep(dir: string, step: Step): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(step.cmd, step.args, { cwd: dir, env: cleanEnv(step.env), timeout: STEP_TIMEOUT_MS, maxBuffer: 32 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (!err) return resolve();
      // node:test and vitest report failures on stdout, npm and cargo on stderr: keep the tail of both.
      const tail = (s: string) => s.trim().split('\n').slice(-40).join('\n');
      reject(new StepFailed(`\`${step.cmd} ${step.args.join(' ')}\` failed (${err.killed ? 'timed out' : `exit ${String(err.code)}`}) in ${dir}\n--- stdout\n${tail(stdout)}\n--- stderr\n${tail(stderr)}`, dir));
    });
  });
}

const available = (cmd: string, args: string[]) => new Promise<boolean>((resolve) => execFile(cmd, args, { timeout: 30_000 }, (err) => resolve(!err)));

/** The commands a user would run to prove a template works, or why this machine cannot run them. */
async function stepsFor(t: ProjectTemplate): Promise<Step[] | { skip: string }> {
  const file = (path: string) => t.files.find((f) => f.path === path);
  const pkg = file('package.json');
  if (pkg) {
    const scripts = (JSON.parse(pkg.content) as { scripts?: Record<string, string> }).scripts ?? {};
    return [
      { label: 'npm install', cmd: 'npm', args: ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'] },
      { label: 'npm test', cmd: 'npm', args: ['test'] },
      ...(scripts.build ? [{ label: 'npm run build', cmd: 'npm', args: ['run', 'build'] }] : []),
    ];
  }
  if (file('pyproject.toml')) {
    if (!(await available('python3', ['--version']))) return { skip: 'python3 is not installed' };
    const steps: Step[] = [{ label: 'unittest', cmd: 'python3', args: ['-m', 'unittest', 'discover', '-s', 'tests', '-v'], env: { PYTHONPATH: 'src', PYTHONDONTWRITEBYTECODE: '1' } }];
    // The template promises pytest compatibility too; prove it where pytest happens to be installed.
    if (await available('python3', ['-m', 'pytest', '--version'])) steps.push({ label: 'pytest', cmd: 'python3', args: ['-m', 'pytest', '-q', '-p', 'no:cacheprovider'], env: { PYTHONDONTWRITEBYTECODE: '1' } });
    return steps;
  }
  if (file('Cargo.toml')) {
    if (!(await available('cargo', ['--version']))) return { skip: 'cargo is not installed' };
    return [{ label: 'cargo test', cmd: 'cargo', args: ['test', '--offline', '--quiet'] }];
  }
  throw new Error(`${t.id}: no known way to check a template without package.json, pyproject.toml or Cargo.toml`);
}

function materialize(t: ProjectTemplate): string {
  const dir = mkdtempSync(join(tmpdir(), `codeloom-template-${t.id}-`));
  for (const f of t.files) {
    mkdirSync(dirname(join(dir, f.path)), { recursive: true });
    writeFileSync(join(dir, f.path), f.content);
  }
  return dir;
}

/** Materializes a template and runs its steps; resolves with a one-line summary, rejects with the failing step's output. */
async function check(t: ProjectTemplate): Promise<string> {
  const started = Date.now();
  const steps = await stepsFor(t);
  if ('skip' in steps) {
    console.log(`Skipping the ${t.id} template check: ${steps.skip}.`);
    return `${t.id}: skipped (${steps.skip})`;
  }
  const dir = materialize(t);
  for (const step of steps) await runStep(dir, step); // a failure keeps the directory for inspection
  rmSync(dir, { recursive: true, force: true });
  return `${t.id}: ${steps.map((s) => s.label).join(', ')} ok in ${((Date.now() - started) / 1000).toFixed(1)}s`;
}

/** A copy of a template with one file's content changed, to prove the check notices breakage. */
function broken(id: string, path: string, from: string, to: string): ProjectTemplate {
  const t = findTemplate(id)!;
  const target = t.files.find((f) => f.path === path)!;
  if (!target.content.includes(from)) throw new Error(`${id}/${path} no longer contains ${JSON.stringify(from)}`);
  return { ...t, id: `${id}-broken`, files: t.files.map((f) => (f === target ? { path, content: f.content.replace(from, to) } : f)) };
}

describe.skipIf(SKIP_INSTALL)('every template installs and passes its own tests as it is', () => {
  it('installs, tests and builds all templates in parallel', async () => {
    const started = Date.now();
    const results = await Promise.allSettled(TEMPLATES.map(check));
    const failures = results.flatMap((r, i) => (r.status === 'rejected' ? [`${TEMPLATES[i]!.id}: ${r.reason instanceof Error ? r.reason.message : String(r.reason)}`] : []));
    for (const r of results) if (r.status === 'fulfilled') console.log(r.value);
    console.log(`all templates checked in ${((Date.now() - started) / 1000).toFixed(1)}s`);
    expect(failures.join('\n\n')).toBe('');
  }, 300_000);

  it('fails a template whose code no longer passes its tests', async () => {
    const cases = [
      broken('node-cli', 'src/count.js', 'return { lines, words,', 'return { lines: lines + 1, words,'),
      broken('python-package', 'src/tempconv/convert.py', '* 9 / 5 + 32', '* 9 / 5 + 31'),
    ];
    const results = await Promise.allSettled(cases.map(check));
    for (const [i, r] of results.entries()) {
      expect(r.status, cases[i]!.id).toBe('rejected');
      if (r.status === 'rejected') {
        expect(r.reason, cases[i]!.id).toBeInstanceOf(StepFailed);
        // The report carries the test runner's own verdict, not just an exit code.
        expect((r.reason as Error).message, cases[i]!.id).toMatch(/AssertionError|FAILED/);
        rmSync((r.reason as StepFailed).dir, { recursive: true, force: true });
      }
    }
  }, 120_000);
});
