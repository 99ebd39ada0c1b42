import type { Agent } from '@codeloom/client';
import { clientFor, parsePairs, print, UsageError, type GlobalFlags } from '../cli-context.js';
import { printPage, type Paging } from '../paging.js';

const USAGE = 'codeloom agents create NAME --model MODEL [--config temperature=0.2 --config maxTokens=2000 --config specialization=coder]\ncodeloom agents list [--page N] [--limit N]\ncodeloom agents show AGENT_ID\ncodeloom agents delete AGENT_ID';

const describeAgent = (a: Agent) => `${a.id}  ${a.name}  ${a.type} (${a.model})${Object.keys(a.config ?? {}).length ? `  ${JSON.stringify(a.config)}` : ''}`;

/** `codeloom agents create|list|show|delete` (run one with `codeloom run AGENT_ID "task"`). */
export async function agents(flags: GlobalFlags, sub: string | undefined, args: string[], opts: { model?: string | undefined; config?: string[] | undefined; paging: Paging }): Promise<number> {
  if (sub === 'create') {
    if (!args[0] || !opts.model) throw new UsageError(USAGE);
    const config = opts.config?.length ? parsePairs(opts.config, 'config') : undefined;
    const a = await clientFor(flags).agents.create({ name: args[0], model: opts.model, ...(config ? { config: config as Agent['config'] } : {}) });
    print(flags, a, `Created ${describeAgent(a)}\nRun it: codeloom run ${a.id} "TASK"`);
    return 0;
  }
  if (sub === 'list') {
    const page = await clientFor(flags).agents.page(opts.paging.page, { limit: opts.paging.limit });
    printPage(flags, page, describeAgent, '(no agents)');
    return 0;
  }
  if (sub === 'show' || sub === 'delete') {
    if (!args[0]) throw new UsageError(USAGE);
    const client = clientFor(flags);
    if (sub === 'show') {
      const a = await client.agents.get(args[0]);
      print(flags, a, describeAgent(a));
    } else {
      await client.agents.delete(args[0]);
      print(flags, { success: true, id: args[0] }, `Deleted ${args[0]}.`);
    }
    return 0;
  }
  throw new UsageError(USAGE);
}
