import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface EvalOptions {
  model?: string | undefined; samples?: string | undefined; only?: string | undefined; json?: string | undefined;
  /** A HumanEval or MBPP JSON Lines task set instead of the built-in tasks. */
  tasks?: string | undefined; reference?: boolean | undefined; engineer?: boolean | undefined; compare?: boolean | undefined;
}

/**
 * `codeloom eval --model M [--samples n] [--only LANG|TASK] [--tasks set.jsonl] [--reference] [--engineer|--compare]
 * [--out report.json]`: the pass@1 eval of a Codeloom checkout (scripts/eval.mjs: 40 tasks with hidden tests, or a
 * HumanEval/MBPP JSON Lines set, sent through the API — one-shot or through the engineer agent — and verified in the sandbox).
 */
export async function evalCommand(opts: EvalOptions): Promise<number> {
  const script = fileURLToPath(new URL('../../../scripts/eval.mjs', import.meta.url));
  if (!existsSync(script)) {
    process.stderr.write('codeloom: eval runs from a Codeloom checkout (npm run eval), which this installation is not\n');
    return 2;
  }
  const { runEval } = (await import(pathToFileURL(script).href)) as { runEval: (o: Record<string, unknown>) => Promise<unknown> };
  try {
    await runEval({
      model: opts.model ?? 'sandbox', samples: opts.samples ?? '1', only: opts.only, jsonOut: opts.json,
      tasks: opts.tasks, reference: opts.reference ?? false, engineer: opts.engineer ?? false, compare: opts.compare ?? false,
    });
    return 0;
  } catch (error) {
    process.stderr.write(`codeloom: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
