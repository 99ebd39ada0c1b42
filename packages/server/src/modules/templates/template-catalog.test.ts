import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { safePath } from '../generate/parse-fenced-files.js';
import { TEMPLATES, findTemplate, type ProjectTemplate } from './template-catalog.js';

const run = promisify(execFile);

describe('template catalogue', () => {
  it('has at least six templates across at least three languages, with unique ids', () => {
    expect(TEMPLATES.length).toBeGreaterThanOrEqual(6);
    expect(new Set(TEMPLATES.map((t) => t.language)).size).toBeGreaterThanOrEqual(3);
    expect(new Set(TEMPLATES.map((t) => t.id)).size).toBe(TEMPLATES.length);
    expect(findTemplate('fastify-api')?.name).toBe('Fastify API');
    expect(findTemplate('nope')).toBeUndefined();
  });

  it('every file path is safe and every template has a README', () => {
    for (const t of TEMPLATES) {
      for (const f of t.files) expect(safePath(f.path), `${t.id}: ${f.path}`).toBe(f.path);
      expect(t.files.some((f) => f.path === 'README.md'), t.id).toBe(true);
    }
  });
});

function materialize(t: ProjectTemplate): string {
  const dir = mkdtempSync(join(tmpdir(), `codeloom-template-${t.id}-`));
  for (const f of t.files) {
    mkdirSync(dirname(join(dir, f.path)), { recursive: true });
    writeFileSync(join(dir, f.path), f.content);
  }
  return dir;
}

const npmCache = join(tmpdir(), 'codeloom-template-npm-cache');
const has = async (cmd: string) => run('sh', ['-c', `command -v ${cmd}`]).then(() => true, () => false);

/** How each template proves it works as it is. */
async function check(t: ProjectTemplate): Promise<void> {
  const dir = materialize(t);
  const opts = { cwd: dir, timeout: 240_000, env: { ...process.env, npm_config_cache: npmCache, npm_config_audit: 'false', npm_config_fund: 'false', CI: '1' } };
  if (t.language === 'javascript' || t.language === 'typescript') {
    await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], opts);
    await run('npm', ['test'], opts);
  } else if (t.language === 'python') {
    await run('python3', ['-m', 'unittest', 'discover', '-s', 'tests'], { ...opts, env: { ...opts.env, PYTHONPATH: join(dir, 'src') } });
  } else if (t.language === 'rust') {
    if (!(await has('cargo'))) return console.log(`skipping the ${t.id} template check: cargo is not installed`);
    await run('cargo', ['test', '--offline', '--quiet'], opts);
  } else {
    throw new Error(`no check for ${t.language}`);
  }
}

describe.skipIf(process.env.CODELOOM_SKIP_TEMPLATE_INSTALL === '1')('every template installs and passes its own tests', () => {
  if (process.env.CODELOOM_SKIP_TEMPLATE_INSTALL === '1') console.log('skipping template install checks: CODELOOM_SKIP_TEMPLATE_INSTALL=1');
  it('installs and tests each template with its own toolchain', async () => {
    const results = await Promise.allSettled(TEMPLATES.map(check));
    const failures = results.flatMap((r, i) => (r.status === 'rejected' ? [`${TEMPLATES[i]!.id}: ${String((r.reason as { stderr?: string; message?: string }).stderr || (r.reason as Error).message).slice(0, 2000)}`] : []));
    expect(failures).toEqual([]);
  }, 300_000);
});
