import type { Run } from '@codeloom/client';
import { clientFor, print, UsageError, type GlobalFlags } from '../cli-context.js';
import { printPage, type Paging } from '../paging.js';

const USAGE = 'codeloom runs list [--page N] [--limit N]\ncodeloom runs show RUN_ID\ncodeloom runs cancel RUN_ID';

const summary = (r: Run) => `${r.id}  ${r.status.padEnd(9)}  ${r.workflow_id ?? r.agent_id ?? ''}  ${r.tokens_used} tokens  ${r.task.length > 60 ? `${r.task.slice(0, 57)}…` : r.task}`;

function details(r: Run): string {
  const steps = r.steps.map((s) => `  ${String(s.index + 1).padStart(2)}. ${s.agent.padEnd(10)} ${s.status}${s.tokens_used ? `  ${s.tokens_used} tokens` : ''}`);
  const files = (r.result?.files ?? []).map((f) => `  ${f.path}`);
  return [summary(r), ...steps, ...(r.result?.summary ? [r.result.summary] : []), ...(r.error ? [`error: ${r.error.code}: ${r.error.message}`] : []), ...files].join('\n');
}

/** `codeloom runs list|show|cancel`: the runs started with `codeloom run` (or the API). */
export async function runs(flags: GlobalFlags, sub: string | undefined, args: string[], opts: { paging: Paging }): Promise<number> {
  if (sub === 'list') {
    const page = await clientFor(flags).runs.page(opts.paging.page, { limit: opts.paging.limit });
    printPage(flags, page, summary, '(no runs)');
    return 0;
  }
  if ((sub === 'show' || sub === 'cancel') && args[0]) {
    const client = clientFor(flags);
    const run = sub === 'show' ? await client.runs.get(args[0]) : await client.runs.cancel(args[0]);
    print(flags, run, details(run));
    return 0;
  }
  throw new UsageError(USAGE);
}
