import { clientFor, parsePairs, print, UsageError, type GlobalFlags } from '../cli-context.js';
import { writeFiles } from './write-files.js';

export interface GenerateOptions {
  language?: string | undefined;
  model?: string | undefined;
  context?: string[] | undefined;
  out?: string | undefined;
  project?: string | undefined;
  /** --verify / --repair N: run the checks in the server's sandbox (and repair up to N times). */
  verify?: boolean | undefined;
  repair?: string | undefined;
}

/** `codeloom generate "prompt"`: streams tokens to the terminal as they arrive, then reports the files (and writes them with --out). */
export async function generate(flags: GlobalFlags, prompt: string | undefined, opts: GenerateOptions): Promise<number> {
  if (!prompt) throw new UsageError('codeloom generate "PROMPT" [--language ts] [--model M] [--context key=value ...] [--out DIR]');
  const client = clientFor(flags);
  const abort = new AbortController();
  process.once('SIGINT', () => abort.abort());
  const params = {
    prompt,
    ...(opts.language ? { language: opts.language } : {}),
    ...(opts.model ? { model: opts.model } : {}),
    ...(opts.context?.length ? { context: parsePairs(opts.context, 'context') } : {}),
    ...(opts.project ? { project_id: opts.project } : {}),
    ...(opts.verify || opts.repair ? { verify: verifyOption(opts.repair) } : {}),
  };
  const stream = client.stream.generate(params, { signal: abort.signal });
  if (!flags.json) for await (const token of stream) process.stdout.write(token);
  const result = await stream.result;
  const written = opts.out ? writeFiles(opts.out, result.files) : [];
  if (flags.json) {
    print(flags, { ...result, written }, '');
  } else {
    const summary = [`\n— ${result.files.length} file(s), ${result.tokens_used} tokens, ${result.processing_time.toFixed(3)} s, model ${result.model} (${result.id})`];
    for (const f of result.files) summary.push(`  ${f.path}`);
    const v = result.verification;
    if (v) summary.push(`verification: ${v.status}${v.reason ? ` (${v.reason})` : ''}, tests ${v.tests.passed} passed / ${v.tests.failed} failed, ${v.attempts} attempt(s)`, ...v.checks.filter((c) => c.exit_code !== 0 && !c.skipped).map((c) => `  ✗ ${c.name}: ${c.command}\n${c.output.split('\n').slice(-15).map((l) => `    ${l}`).join('\n')}`));
    if (written.length) summary.push(`written to ${opts.out}`);
    process.stderr.write(`${summary.join('\n')}\n`);
  }
  return result.verification && result.verification.status === 'failed' ? 1 : 0;
}

function verifyOption(repair: string | undefined): true | { repair: number } {
  if (repair === undefined) return true;
  const n = Number(repair);
  if (!Number.isInteger(n) || n < 0 || n > 3) throw new UsageError('--repair takes 0 to 3');
  return { repair: n };
}
