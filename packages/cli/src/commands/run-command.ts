import type { Run, RunStep } from '@codeloom/protocol';
import { clientFor, parsePairs, print, UsageError, type GlobalFlags } from '../cli-context.js';
import { writeFiles } from './write-files.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const MARK: Record<RunStep['status'], string> = { pending: '·', running: '', succeeded: '✔', failed: '✖', skipped: '–' };

/** One line per step; on a terminal the running step's line is redrawn with a spinner and a token count. */
class StepView {
  private readonly steps = new Map<number, { agent: string; status: RunStep['status']; tokens: number; tool?: string }>();
  private frame = 0;
  private timer: NodeJS.Timeout | undefined;
  private drawn = 0;

  constructor(private readonly tty: boolean) {
    if (tty) this.timer = setInterval(() => this.draw(), 80);
  }

  update(index: number, agent: string, status: RunStep['status'], tokens?: number): void {
    const prev = this.steps.get(index);
    this.steps.set(index, { agent, status, tokens: tokens ?? prev?.tokens ?? 0 });
    if (!this.tty && prev?.status !== status) process.stderr.write(`step ${index + 1} ${agent}: ${status}${tokens ? ` (${tokens} tokens)` : ''}\n`);
  }

  /** An engineer's latest tool call (one folded line); without a TTY each is printed as it ends. */
  tool(index: number, line: string): void {
    const s = this.steps.get(index);
    if (s) s.tool = line;
    if (!this.tty) process.stderr.write(`  step ${index + 1} ${line}\n`);
  }

  token(index: number): void {
    const s = this.steps.get(index);
    if (s) s.tokens += 1;
  }

  private draw(): void {
    if (!this.tty) return;
    this.frame = (this.frame + 1) % FRAMES.length;
    const lines = [...this.steps.entries()].sort(([a], [b]) => a - b).flatMap(([i, s]) => [
      `${s.status === 'running' ? FRAMES[this.frame] : MARK[s.status]} ${String(i + 1).padStart(2)}. ${s.agent.padEnd(11)} ${s.status}${s.tokens ? `  ${s.tokens} tokens` : ''}`,
      ...(s.status === 'running' && s.tool ? [`      ↳ ${s.tool}`] : [])]);
    process.stderr.write(`${this.drawn ? `\x1b[${this.drawn}A` : ''}${lines.map((l) => `\x1b[2K${l}\n`).join('')}`);
    this.drawn = lines.length;
  }

  stop(): void {
    clearInterval(this.timer);
    this.draw();
  }
}

interface RunOptions {
  require?: string[] | undefined;
  out?: string | undefined;
  project?: string | undefined;
  /** --max-cost-usd: the run's ceiling on cost (USD), replacing the workflow's or agent's. */
  maxCostUsd?: string | undefined;
  /** --max-tokens: the run's ceiling on its tokens (the whole run, not each step's maxTokens). */
  maxTokens?: string | undefined;
}

/** The execute body's `config` from --max-cost-usd and --max-tokens (the server checks the bounds); undefined without either. */
function ceilingsOf(opts: RunOptions): { max_cost_usd?: number; max_tokens?: number } | undefined {
  if (opts.maxCostUsd === undefined && opts.maxTokens === undefined) return undefined;
  const config: { max_cost_usd?: number; max_tokens?: number } = {};
  if (opts.maxCostUsd !== undefined) {
    const usd = Number(opts.maxCostUsd);
    if (!/^\d+(\.\d+)?$/.test(opts.maxCostUsd) || !(usd > 0)) throw new UsageError(`--max-cost-usd takes a number of dollars above 0 (got ${JSON.stringify(opts.maxCostUsd)})`);
    config.max_cost_usd = usd;
  }
  if (opts.maxTokens !== undefined) {
    if (!/^\d+$/.test(opts.maxTokens) || Number(opts.maxTokens) < 1) throw new UsageError(`--max-tokens takes a positive integer (got ${JSON.stringify(opts.maxTokens)})`);
    config.max_tokens = Number(opts.maxTokens);
  }
  return config;
}

/** `codeloom run WORKFLOW_ID "task"`: executes a workflow (or an agent, agt_…), shows its steps live, then its files. */
export async function run(flags: GlobalFlags, targetId: string | undefined, task: string | undefined, opts: RunOptions): Promise<number> {
  if (!targetId || !task) throw new UsageError('codeloom run WORKFLOW_ID "TASK" [--require key=value ...] [--out DIR] [--project PROJECT_ID] [--max-tokens N] [--max-cost-usd USD]');
  const client = clientFor(flags);
  const config = ceilingsOf(opts);
  const body = {
    task, ...(opts.require?.length ? { requirements: parsePairs(opts.require, 'require') } : {}), ...(opts.project ? { project_id: opts.project } : {}),
    ...(config ? { config } : {}),
  };
  const started = targetId.startsWith('agt_') ? await client.agents.execute(targetId, body) : await client.workflows.execute(targetId, body);
  const view = flags.json ? undefined : new StepView(Boolean(process.stderr.isTTY));
  if (view) process.stderr.write(`run ${started.id}\n`);
  started.steps.forEach((s) => view?.update(s.index, s.agent, s.status));
  const watch = client.runs.watch(started.id);
  process.once('SIGINT', () => { void client.runs.cancel(started.id).catch(() => undefined); });
  let final: Run | undefined;
  const calls = new Map<string, ToolCallData>();
  try {
    for await (const event of watch) {
      if (!view) continue;
      if (event.event === 'step_started') view.update(event.data.index, event.data.agent, 'running');
      else if (event.event === 'token') view.token(event.step);
      else if (event.event === 'tool_call') { calls.set(event.data.call_id, event.data); view.tool(event.data.index, toolLine(event.data)); }
      else if (event.event === 'tool_result') { const call = calls.get(event.data.call_id); if (call) view.tool(event.data.index, toolLine(call, event.data)); }
      else if (event.event === 'step_completed') view.update(event.data.index, event.data.step.agent, event.data.step.status, event.data.step.tokens_used);
      else if (event.event === 'run_started') event.data.steps.forEach((s) => view.update(s.index, s.agent, s.status));
    }
    final = await watch.result;
  } finally {
    view?.stop();
  }
  final ??= await client.runs.get(started.id);
  final.steps.forEach((s) => view?.update(s.index, s.agent, s.status, s.tokens_used));
  const files = final.result?.files ?? [];
  const written = opts.out && files.length ? writeFiles(opts.out, files) : [];
  if (flags.json) print(flags, { ...final, written }, '');
  else {
    const lines = [`${final.status}: ${final.result?.summary ?? final.error?.message ?? ''}`, ...files.map((f) => `  ${f.path}`)];
    if (written.length) lines.push(`written to ${opts.out}`);
    process.stdout.write(`${lines.join('\n')}\n`);
  }
  return final.status === 'succeeded' ? 0 : 1;
}

type ToolCallData = { name: string; arguments: unknown; step: number };

/**
 * One folded line for an engineer's tool call: `run python3 -m unittest` while it runs, then
 * `run python3 -m unittest → exit 1 · FAILED (failures=1)` (the exit status and the output's last line).
 */
export function toolLine(call: ToolCallData, result?: { ok: boolean; output: string; duration_ms: number }): string {
  const a = (call.arguments ?? {}) as Record<string, unknown>;
  const what = typeof a.command === 'string' ? a.command : typeof a.path === 'string' ? a.path : typeof a.pattern === 'string' ? a.pattern : '';
  const head = `${call.name}${what ? ` ${what.replace(/\s+/g, ' ')}` : ''}`;
  const shown = head.length > 80 ? `${head.slice(0, 79)}…` : head;
  if (!result) return `[${call.step}] ${shown} …`;
  const exit = /^\[(exit [^\]]*|killed[^\]]*)\]$/m.exec(result.output)?.[1];
  const last = result.output.trim().split('\n').filter((l) => l.trim() && !l.startsWith('$ ') && !/^\[(exit|killed)/.test(l)).at(-1)?.trim() ?? '';
  const status = exit ?? (result.ok ? 'ok' : 'failed');
  return `[${call.step}] ${shown} → ${status}${last && call.name !== 'finish' ? ` · ${last.length > 60 ? `${last.slice(0, 59)}…` : last}` : ''}`;
}
