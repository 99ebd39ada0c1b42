// npm run eval -- [--model M] [--samples n] [--only python|typescript|c|<task id>] [--tasks set.jsonl] [--reference]
//                  [--engineer | --compare] [--json out.json] [--url http://… --key cl_live_…]
// Sends every task (eval/tasks.mjs, or a HumanEval/MBPP JSON Lines set given with --tasks: eval/task-sets.mjs)
// through the service's own API, adds the task's hidden tests to the answer's source files and verifies them in
// the sandbox runner. One-shot (POST /api/v1/generate) by default; --engineer runs the `engineer` agent on an
// empty project per task (POST /api/v1/agents/{id}/execute) and verifies the files it leaves; --compare does
// both. --reference verifies the set's own solutions instead of asking a model (checks a task set).
// Reports pass@1 (and pass@k up to --samples with the unbiased estimator), tokens, cost and wall time per task
// and per solved task, as JSON and a Markdown table. Without --url it starts the built server
// (packages/server/dist) on a temporary SQLite database; OPENAI_* / ANTHROPIC_* / CODELOOM_* settings in the
// environment are passed through.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildIfNeeded } from './build-if-needed.mjs';

/** Runs the eval and prints its table; the report ({summary, tasks, samples}). Also `npm run bench eval`. */
export async function runEval({ model = 'sandbox', samples: n = 1, only, jsonOut, concurrency: c = 2, url, key: apiKey, tasks: tasksPath, reference = false, engineer = false, compare = false } = {}) {
  const samples = Math.max(1, Number(n));
  const concurrency = Math.max(1, Number(c));
  const modes = reference ? ['reference'] : compare ? ['generate', 'engineer'] : engineer ? ['engineer'] : ['generate'];
  // A task set from a path is read (and refused with its bad lines) before anything is built or started.
  const TASKS = tasksPath ? await (await import('../eval/task-sets.mjs')).readTaskSet(tasksPath) : (await import('../eval/tasks.mjs')).TASKS;
  if (reference && TASKS.some((t) => !t.reference)) throw new Error('--reference needs every task to carry its solution (HumanEval canonical_solution, MBPP code); the built-in tasks have none.');
  buildIfNeeded();
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
  const call = async (path, body, method = body ? 'POST' : 'GET') => {
    const res = await fetch(`${base}/api/v1${path}`, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
    return { status: res.status, body: await res.json() };
  };

  // The engineer agent (issue 27): created once; a server without that agent type makes a coder, and is refused.
  let engineerAgent;
  if (modes.includes('engineer')) {
    const created = await call('/agents', { name: 'eval engineer', model, config: { specialization: 'engineer' } });
    if (created.status !== 201) throw new Error(`Cannot create the engineer agent: ${created.status} ${created.body.code}: ${created.body.detail ?? created.body.title}`);
    if (created.body.type !== 'engineer') {
      await server?.stop();
      throw new Error(`--engineer: this server has no \`engineer\` agent type (an agent asked for one was made a "${created.body.type}"). Use a server built with the engineer agent (issue 27), or run without --engineer.`);
    }
    engineerAgent = created.body;
  }

  /** One answer: its files and what it cost, from one-shot generation, the engineer loop, or the set's solution. */
  async function answer(task, mode) {
    if (mode === 'reference') return { files: task.reference, tokens: 0, cost: 0 };
    if (mode === 'generate') {
      const res = await call('/generate', { prompt: task.prompt, language: task.language, model, ...(samples > 1 ? { temperature: 0.8 } : {}) });
      if (res.status !== 200) return { error: `${res.status} ${res.body.code}: ${res.body.detail ?? res.body.title}`, tokens: 0, cost: 0 };
      return { files: res.body.files, tokens: res.body.tokens_used, cost: res.body.cost_usd ?? 0 };
    }
    // The engineer: an empty project per sample, one run on it; its files afterwards are the answer.
    const project = await call('/projects', { name: `eval ${task.id}`.slice(0, 100) });
    if (project.status !== 201) return { error: `${project.status} ${project.body.code}`, tokens: 0, cost: 0 };
    const run = await call(`/agents/${engineerAgent.id}/execute`, { task: task.prompt, language: task.language, project_id: project.body.id });
    if (run.status !== 202 && run.status !== 201) return { error: `${run.status} ${run.body.code}: ${run.body.detail ?? run.body.title}`, tokens: 0, cost: 0 };
    let record = run.body;
    while (['queued', 'running'].includes(record.status)) {
      await new Promise((r) => setTimeout(r, 250));
      record = (await call(`/runs/${record.id}`)).body;
    }
    const usage = { tokens: record.tokens_used ?? 0, cost: record.cost_usd ?? 0, steps: record.steps?.length };
    if (record.status !== 'succeeded') return { ...usage, error: `run ${record.status}${record.error ? `: ${record.error.code ?? record.error}` : ''}` };
    const list = (await call(`/projects/${project.body.id}/files?limit=100`)).body.data ?? [];
    const files = await Promise.all(list.map(async (f) => (await call(`/projects/${project.body.id}/files/${f.path.split('/').map(encodeURIComponent).join('/')}`)).body));
    return { ...usage, files: files.map((f) => ({ path: f.path, content: f.content })) };
  }

  async function sample(task, mode) {
    const started = performance.now();
    const a = await answer(task, mode);
    const genMs = performance.now() - started;
    if (a.error) return { passed: false, tokens: a.tokens, cost: a.cost, genMs, verifyMs: 0, wallMs: genMs, error: a.error };
    // The answer's own sources only (its tests, manifests and configs could replace the hidden checks), plus the hidden tests.
    const files = a.files.filter((f) => SOURCE[task.language].test(f.path) && !isTestPath(f.path));
    const v = await verifier.verify(task.language, [...files, ...task.hidden], { attempt: 1 });
    return { passed: v.status === 'passed', status: v.status, tests: v.tests, tokens: a.tokens, cost: a.cost, genMs, verifyMs: v.duration_ms, wallMs: performance.now() - started, files: files.map((f) => f.path) };
  }

  /** The unbiased pass@k estimator (Chen et al., 2021): 1 − C(n−c, k) / C(n, k). */
  function passAtK(n, c, k) {
    if (n - c < k) return 1;
    let p = 1;
    for (let i = n - c + 1; i <= n; i++) p *= 1 - k / i;
    return 1 - p;
  }

  const started = performance.now();
  const keyOf = (task, mode) => (modes.length > 1 ? `${mode}:${task.id}` : task.id);
  const jobs = modes.flatMap((mode) => tasks.flatMap((task) => Array.from({ length: samples }, () => [task, mode])));
  const results = new Map(modes.flatMap((mode) => tasks.map((t) => [keyOf(t, mode), []])));
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < jobs.length) {
      const [task, mode] = jobs[next++];
      results.get(keyOf(task, mode)).push(await sample(task, mode));
    }
  }));
  await server?.stop();
  const seconds = (performance.now() - started) / 1000;

  const sum = (xs, f) => xs.reduce((n, x) => n + f(x), 0);
  const rows = modes.flatMap((mode) => tasks.map((t) => {
    const r = results.get(keyOf(t, mode));
    const c = r.filter((x) => x.passed).length;
    return {
      task: t.id, mode, language: t.language, samples: r.length, passed: c, 'pass@1': passAtK(r.length, c, 1),
      tokens: Math.round(sum(r, (x) => x.tokens) / r.length),
      cost_usd: +(sum(r, (x) => x.cost) / r.length).toFixed(6),
      'answer s': +(sum(r, (x) => x.genMs) / r.length / 1000).toFixed(3),
      'verify s': +(sum(r, (x) => x.verifyMs) / r.length / 1000).toFixed(3),
      'wall s': +(sum(r, (x) => x.wallMs) / r.length / 1000).toFixed(3),
      status: [...new Set(r.map((x) => x.error ?? x.status))].join(','),
    };
  }));
  const ks = [1, 2, 5, 10].filter((k) => k <= samples);
  /** Per mode: pass@k, by language, and what a solved task took (tokens, cost and wall time of every sample, over the samples that passed). */
  const summarize = (mode) => {
    const mine = rows.filter((r) => r.mode === mode);
    const all = mine.flatMap((r) => results.get(keyOf({ id: r.task }, mode)));
    const solved = all.filter((x) => x.passed).length;
    const per = (f) => (solved ? sum(all, f) / solved : null);
    const mean = (f) => sum(mine, f) / mine.length;
    return {
      mode, tasks: mine.length, samples, ...Object.fromEntries(ks.map((k) => [`pass@${k}`, +mean((r) => passAtK(r.samples, r.passed, k)).toFixed(4)])),
      by_language: Object.fromEntries([...new Set(mine.map((r) => r.language))].map((l) => [l, +(sum(mine.filter((r) => r.language === l), (r) => r['pass@1']) / mine.filter((r) => r.language === l).length).toFixed(4)])),
      solved, tokens: sum(all, (x) => x.tokens), cost_usd: +sum(all, (x) => x.cost).toFixed(6),
      tokens_per_solved: per((x) => x.tokens) === null ? null : Math.round(per((x) => x.tokens)),
      cost_usd_per_solved: per((x) => x.cost) === null ? null : +per((x) => x.cost).toFixed(6),
      wall_s_per_solved: per((x) => x.wallMs) === null ? null : +(per((x) => x.wallMs) / 1000).toFixed(3),
    };
  };
  const byMode = Object.fromEntries(modes.map((m) => [m, summarize(m)]));
  const summary = { model, source: tasksPath ?? 'eval/tasks.mjs', tasks: tasks.length, samples, seconds: +seconds.toFixed(1), modes: byMode, ...Object.fromEntries(ks.map((k) => [`pass@${k}`, byMode[modes.at(-1)][`pass@${k}`]])), by_language: byMode[modes.at(-1)].by_language };

  const md = [
    `## Codeloom eval: model \`${model}\`, ${tasks.length} tasks × ${samples} sample(s)${modes.length > 1 || modes[0] !== 'generate' ? `, ${modes.join(' and ')}` : ''}, ${summary.seconds} s`,
    '',
    ...Object.values(byMode).map((m) => `${modes.length > 1 || m.mode !== 'generate' ? `**${m.mode}**: ` : ''}${ks.map((k) => `pass@${k} **${(m[`pass@${k}`] * 100).toFixed(1)} %**`).join(' · ')} — by language (pass@1): ${Object.entries(m.by_language).map(([l, p]) => `${l} ${(p * 100).toFixed(1)} %`).join(', ')} — per solved task: ${m.solved ? `${m.tokens_per_solved} tokens, ${m.cost_usd_per_solved} USD, ${m.wall_s_per_solved} s` : 'none solved'}`),
    '',
    '| task | mode | passed | pass@1 | tokens | cost USD | answer s | verify s | wall s | status |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.task} | ${r.mode} | ${r.passed}/${r.samples} | ${r['pass@1'].toFixed(2)} | ${r.tokens} | ${r.cost_usd} | ${r['answer s']} | ${r['verify s']} | ${r['wall s']} | ${r.status} |`),
  ].join('\n');
  console.log(md);
  const report = { summary, tasks: rows, samples: Object.fromEntries(results) };
  if (jsonOut) writeFileSync(jsonOut, JSON.stringify(report, null, 2));
  else console.log(`\n${JSON.stringify({ summary: report.summary })}`);
  return report;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const opt = (name, fallback) => { const i = args.indexOf(`--${name}`); return i >= 0 ? args[i + 1] : fallback; };
  try {
    const flag = (name) => args.includes(`--${name}`);
    await runEval({ model: opt('model', 'sandbox'), samples: opt('samples', '1'), only: opt('only'), jsonOut: opt('json'), concurrency: opt('concurrency', '2'), url: opt('url'), key: opt('key'), tasks: opt('tasks'), reference: flag('reference'), engineer: flag('engineer'), compare: flag('compare') });
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
