// npm run bench: every benchmark, measured in one run on this machine. No pass/fail: figures and ratios.
import { buildIfNeeded } from './build-if-needed.mjs';

buildIfNeeded();
const only = process.argv[2];
const duration = Number(process.env.BENCH_DURATION ?? 5);
const { benchProfile } = await import('../bench/profile.bench.mjs');
const { benchGenerate } = await import('../bench/generate.bench.mjs');
const { benchStream } = await import('../bench/stream.bench.mjs');
const { benchRuns } = await import('../bench/runs.bench.mjs');
const { benchParse } = await import('../bench/parse.bench.mjs');
const { benchSpend } = await import('../bench/spend.bench.mjs');
const { benchCodecs } = await import('../bench/codecs.bench.mjs');
const { benchObservability } = await import('../bench/observability.bench.mjs');
const { benchRouting } = await import('../bench/routing.bench.mjs');
const { benchEngineer } = await import('../bench/engineer.bench.mjs');
const suites = {
  profile: () => benchProfile({ duration }),
  generate: () => benchGenerate({ duration }),
  // /generate's CPU per request with a priced model and three budgets on every call, against none (target: within 10 %).
  spend: () => benchSpend({ duration }),
  // /generate's CPU per request with the request log, metrics and OTLP tracing on, against them off (target: within 10 %); memory over BENCH_MEMORY_SECONDS; bytes per logged call.
  observability: () => benchObservability({ duration }),
  // Deployment routing: the router's choice in ns (target ≤ 5 µs) and /generate's CPU per request on a model served by two deployments against one configured by environment (target: within 10 %).
  routing: () => benchRouting({ duration }),
  stream: () => benchStream(),
  runs: () => benchRuns(),
  // parseFencedFiles on 1 MB and 2 MB answers, realistic and hostile: µs/KB and whether the time grows linearly.
  parse: () => benchParse(),
  // The wire-format codecs (Anthropic Messages, OpenAI chat) on a short request and a Claude Code turn: CPU µs per call (target ≤ 50).
  codecs: () => benchCodecs(),
  // The engineer's loop: its own CPU per step (tool dispatch, workspace, truncation, files read back), model and command time excluded.
  engineer: () => benchEngineer(),
  // pass@1 of BENCH_EVAL_MODEL (default: the sandbox model) on the eval's 40 tasks, verified in the sandbox.
  eval: async () => (await import('./eval.mjs')).runEval({ model: process.env.BENCH_EVAL_MODEL ?? 'sandbox' }),
};
for (const [name, run] of Object.entries(suites)) {
  if (only && only !== name) continue;
  await run();
}
