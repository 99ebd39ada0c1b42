import { clientFor, print, UsageError, type GlobalFlags } from '../cli-context.js';
import { printPage, type Paging } from '../paging.js';

export async function projects(flags: GlobalFlags, sub: string | undefined, args: string[], opts: { template?: string | undefined; description?: string | undefined; paging: Paging }): Promise<number> {
  const client = clientFor(flags);
  if (sub === 'list') {
    const page = await client.projects.page(opts.paging.page, { limit: opts.paging.limit });
    printPage(flags, page, (p) => `${p.id}  ${p.name}  ${p.files_count} file(s)${p.template ? `  [${p.template}]` : ''}`, '(no projects)');
    return 0;
  }
  if (sub === 'create') {
    if (!args[0]) throw new UsageError('codeloom projects create NAME [--template ID] [--description TEXT]');
    const p = await client.projects.create({ name: args[0], ...(opts.template ? { template: opts.template } : {}), ...(opts.description ? { description: opts.description } : {}) });
    print(flags, p, `Created ${p.id} (${p.name}) with ${p.files_count} file(s).`);
    return 0;
  }
  if (sub === 'files') {
    const [id, path] = args;
    if (!id) throw new UsageError('codeloom projects files PROJECT_ID [PATH] [--page N] [--limit N]');
    if (path) {
      const file = await client.projects.files.get(id, path);
      if (flags.json) print(flags, file, ''); else process.stdout.write(file.content);
      return 0;
    }
    const page = await client.projects.files.page(id, opts.paging.page, { limit: opts.paging.limit });
    printPage(flags, page, (f) => `${f.path}  (${f.size} bytes)`, '(no files)');
    return 0;
  }
  if (sub === 'templates') {
    const list = await client.templates.list();
    print(flags, list, list.map((t) => `${t.id}  (${t.language})  ${t.description}`).join('\n'));
    return 0;
  }
  throw new UsageError('codeloom projects list|create|files|templates');
}
