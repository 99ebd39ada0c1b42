// npm run eval -- [--model M] [--samples n] [--only python|typescript|c|<task id>] [--json out.json] [--url http://… --key cl_live_…]
// Sends every task of eval/tasks.mjs through the service's own API (POST /api/v1/generate), adds the task's hidden
// tests to the answer's source files and verifies them in the sandbox runner. Reports pass@1 (and pass@k up to
// --samples with the unbiased estimator), tokens and time per task, as JSON and a Markdown table.
// Without --url it starts the built server (packages/server/dist) on a temporary SQLite database; OPENAI_* /
// ANTHROPIC_* / CODELOOM_* settings in the environment are passed through.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildIfNeeded } from './build-if-needed.mjs';

/** Runs the eval and prints its table; the report ({summary, tasks, samples}). Also `npm run bench eval`. */
export async function runEval({ model = 'sandbox', samples: n = 1, only, jsonOut, concurrency: c = 2, url, key: apiKey } = {}) {
  const samples = Math.max(1, Number(n));
  const concurrency = Math.max(1, Number(c));
  buildIfNeeded();
  const { TASKS } = await import('../eval/tasks.mjs');
  const { loadConfig } = await import('../packages/server/dist/config/load-config.js');
  const { VerificationService } = await import('../packages/server/dist/modules/verify/verification-service.js');
  const { isTestPath } = await import('../packages/server/dist/modules/verify/recipes.js');

  const verifier = new VerificationService(loadConfig({ ...process.env, CODELOOM_VERIFY_CONCURRENCY: String(concurrency), CODELOOM_VERIFY_TIMEOUT: process.env.CODELOOM_VERIFY_TIMEOUT ?? '60' }));
  const sandbox = await verifier.status();
  if (!sandbox.available) throw new Error(`The sandbox cannot run here: ${sandbox.reason}`);

  let server;
  let base = url;
  let key = apiKey;
  if (!base) {
    const { startCodeloom, enterpriseUser } = await import('../bench/lib.mjs');
    server = await startCodeloom({ LOG_LEVEL: 'warn' });
    base = server.url;
    ({ key } = await enterpriseUser(server, `eval-${Date.now()}@example.com`));
  }

  const SOURCE = { python: /\.py$/, typescript: /\.(m|c)?ts$/, c: /\.[ch]$/ };
  const tasks = TASKS.filter((t) => !only || t.language === only || t.id === only);

  async function sample(task) {
    const started = performance.now();
    const res = await fetch(`${base}/api/v1/generate`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: task.prompt, language: task.language, model, ...(samples > 1 ? { temperature: 0.8 } : {}) }),
    });
    const body = await res.json();
    const genMs = performance.now() - started;
    if (res.status !== 200) return { passed: false, tokens: 0, genMs, verifyMs: 0, error: `${res.status} ${body.code}: ${body.detail ?? body.title}` };
    // The answer's own sources only (its tests, manifests and configs could replace the hidden checks), plus the hidden tests.
    const files = body.files.filter((f) => SOURCE[task.language].test(f.path) && !isTestPath(f.path));
    const v = await verifier.verify(task.language, [...files, ...task.hidden], { attempt: 1 });
    return { passed: v.status === 'passed', status: v.status, tests: v.tests, tokens: body.tokens_used, genMs, verifyMs: v.duration_ms, files: files.map((f) => f.path) };
  }

  /** The unbiased pass@k estimator (Chen et al., 2021): 1 − C(n−c, k) / C(n, k). */
  function passAtK(n, c, k) {
    if (n - c < k) return 1;
    let p = 1;
    for (let i = n - c + 1; i <= n; i++) p *= 1 - k / i;
    return 1 - p;
  }

  const started = performance.now();
  const jobs = tasks.flatMap((task) => Array.from({ length: samples }, () => task));
  const results = new Map(tasks.map((t) => [t.id, []]));
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < jobs.length) {
      const task = jobs[next++];
      results.get(task.id).push(await sample(task));
    }
  }));
  await server?.stop();
  const seconds = (performance.now() - started) / 1000;

  const rows = tasks.map((t) => {
    const r = results.get(t.id);
    const c = r.filter((x) => x.passed).length;
    return {
      task: t.id, language: t.language, samples: r.length, passed: c, 'pass@1': passAtK(r.length, c, 1),
      tokens: Math.round(r.reduce((n, x) => n + x.tokens, 0) / r.length),
      'generate s': +(r.reduce((n, x) => n + x.genMs, 0) / r.length / 1000).toFixed(3),
      'verify s': +(r.reduce((n, x) => n + x.verifyMs, 0) / r.length / 1000).toFixed(3),
      status: [...new Set(r.map((x) => x.error ?? x.status))].join(','),
    };
  });
  const ks = [1, 2, 5, 10].filter((k) => k <= samples);
  const mean = (f) => rows.reduce((n, r) => n + f(r), 0) / rows.length;
  const summary = { model, tasks: rows.length, samples, seconds: +seconds.toFixed(1), ...Object.fromEntries(ks.map((k) => [`pass@${k}`, +mean((r) => passAtK(r.samples, r.passed, k)).toFixed(4)])) };
  const byLanguage = Object.fromEntries([...new Set(rows.map((r) => r.language))].map((l) => [l, +(rows.filter((r) => r.language === l).reduce((n, r) => n + r['pass@1'], 0) / rows.filter((r) => r.language === l).length).toFixed(4)]));

  const md = [
    `## Codeloom eval: model \`${model}\`, ${rows.length} tasks × ${samples} sample(s), ${summary.seconds} s`,
    '',
    `${ks.map((k) => `pass@${k} **${(summary[`pass@${k}`] * 100).toFixed(1)} %**`).join(' · ')} — by language (pass@1): ${Object.entries(byLanguage).map(([l, p]) => `${l} ${(p * 100).toFixed(1)} %`).join(', ')}`,
    '',
    '| task | passed | pass@1 | tokens | generate s | verify s | status |',
    '|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.task} | ${r.passed}/${r.samples} | ${r['pass@1'].toFixed(2)} | ${r.tokens} | ${r['generate s']} | ${r['verify s']} | ${r.status} |`),
  ].join('\n');
  console.log(md);
  const report = { summary: { ...summary, by_language: byLanguage }, tasks: rows, samples: Object.fromEntries(results) };
  if (jsonOut) writeFileSync(jsonOut, JSON.stringify(report, null, 2));
  else console.log(`\n${JSON.stringify({ summary: report.summary })}`);
  return report;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const opt = (name, fallback) => { const i = args.indexOf(`--${name}`); return i >= 0 ? args[i + 1] : fallback; };
  try {
    await runEval({ model: opt('model', 'sandbox'), samples: opt('samples', '1'), only: opt('only'), jsonOut: opt('json'), concurrency: opt('concurrency', '2'), url: opt('url'), key: opt('key') });
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
