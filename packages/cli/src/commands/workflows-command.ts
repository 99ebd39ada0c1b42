import { AGENT_TYPES, type AgentType } from '@codeloom/protocol';
import type { Workflow } from '@codeloom/client';
import { clientFor, parsePairs, print, UsageError, type GlobalFlags } from '../cli-context.js';
import { printPage, type Paging } from '../paging.js';

const USAGE = 'codeloom workflows create NAME --agent TYPE[:MODEL] ... [--config key=value ...]\ncodeloom workflows list [--page N] [--limit N]\ncodeloom workflows show WORKFLOW_ID\ncodeloom workflows delete WORKFLOW_ID';

/** `--agent planner --agent coder:gpt-4o` or `--agent planner,coder,reviewer`: the workflow's agents in order. */
export function parseAgents(values: string[] | undefined): Array<{ type: AgentType; model?: string }> {
  const out: Array<{ type: AgentType; model?: string }> = [];
  for (const spec of (values ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean)) {
    const colon = spec.indexOf(':');
    const type = colon < 0 ? spec : spec.slice(0, colon);
    const model = colon < 0 ? undefined : spec.slice(colon + 1);
    if (!(AGENT_TYPES as readonly string[]).includes(type)) throw new UsageError(`--agent: unknown agent type ${JSON.stringify(type)} (one of ${AGENT_TYPES.join(', ')})`);
    out.push({ type: type as AgentType, ...(model ? { model } : {}) });
  }
  return out;
}

function describeWorkflow(w: Workflow): string {
  const agents = w.agents.map((a, i) => `  ${String(i + 1).padStart(2)}. ${a.type} (${a.model})`);
  const config = Object.keys(w.config ?? {}).length ? [`  config ${JSON.stringify(w.config)}`] : [];
  return [`${w.id}  ${w.name}  created ${w.created_at}`, ...agents, ...config].join('\n');
}

/** `codeloom workflows create|list|show|delete` (run one with `codeloom run WORKFLOW_ID "task"`). */
export async function workflows(flags: GlobalFlags, sub: string | undefined, args: string[], opts: { agent?: string[] | undefined; config?: string[] | undefined; paging: Paging }): Promise<number> {
  if (sub === 'create') {
    const agents = parseAgents(opts.agent);
    if (!args[0] || agents.length === 0) throw new UsageError(USAGE);
    const config = opts.config?.length ? parsePairs(opts.config, 'config') : undefined;
    const w = await clientFor(flags).workflows.create({ name: args[0], agents, ...(config ? { config } : {}) });
    print(flags, w, `Created ${describeWorkflow(w)}\nRun it: codeloom run ${w.id} "TASK"`);
    return 0;
  }
  if (sub === 'list') {
    const page = await clientFor(flags).workflows.page(opts.paging.page, { limit: opts.paging.limit });
    printPage(flags, page, (w) => `${w.id}  ${w.name}  ${w.agents.map((a) => a.type).join(' → ')}`, '(no workflows)');
    return 0;
  }
  if (sub === 'show' || sub === 'delete') {
    if (!args[0]) throw new UsageError(USAGE);
    const client = clientFor(flags);
    if (sub === 'show') {
      const w = await client.workflows.get(args[0]);
      print(flags, w, describeWorkflow(w));
    } else {
      await client.workflows.delete(args[0]);
      print(flags, { success: true, id: args[0] }, `Deleted ${args[0]}.`);
    }
    return 0;
  }
  throw new UsageError(USAGE);
}
