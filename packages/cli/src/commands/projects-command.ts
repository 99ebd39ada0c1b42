import { writeFileSync } from 'node:fs';
import { clientFor, print, UsageError, type GlobalFlags } from '../cli-context.js';
import { printPage, type Paging } from '../paging.js';

const revisionArg = (value: string | undefined, usage: string): number => {
  if (!value || !/^[1-9]\d{0,9}$/.test(value)) throw new UsageError(usage);
  return Number(value);
};

export async function projects(flags: GlobalFlags, sub: string | undefined, args: string[], opts: { template?: string | undefined; description?: string | undefined; out?: string | undefined; paging: Paging }): Promise<number> {
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
  if (sub === 'revisions') {
    if (!args[0]) throw new UsageError('codeloom projects revisions PROJECT_ID [--page N] [--limit N]');
    const page = await client.projects.revisions.page(args[0], opts.paging.page, { limit: opts.paging.limit });
    printPage(flags, page, (r) => `r${r.number}  ${r.created_at}  ${r.files_changed} file(s)  ${r.author?.name ?? '-'}  ${r.message}`, '(no revisions)');
    return 0;
  }
  if (sub === 'diff') {
    const usage = 'codeloom projects diff PROJECT_ID REVISION';
    const rev = await client.projects.revisions.get(args[0] ?? '', revisionArg(args[1], usage));
    print(flags, rev, `r${rev.number}  ${rev.created_at}  ${rev.message}\n${rev.files.map((f) => f.diff).join('')}`);
    return 0;
  }
  if (sub === 'restore') {
    const usage = 'codeloom projects restore PROJECT_ID REVISION';
    const number = revisionArg(args[1], usage);
    const latest = (await client.projects.revisions.page(args[0] ?? '', 1, { limit: 1 })).data[0]?.number;
    const rev = await client.projects.revisions.restore(args[0] ?? '', number);
    // The server answers with the latest revision when the files already were as at `number`.
    print(flags, rev, rev.number !== latest ? `Restored revision ${number} as r${rev.number} (${rev.files_changed} file(s) changed).` : `The files already are as at revision ${number} (latest: r${rev.number}).`);
    return 0;
  }
  if (sub === 'download') {
    const usage = 'codeloom projects download PROJECT_ID [REVISION] [--out FILE.zip]';
    if (!args[0]) throw new UsageError(usage);
    const number = args[1] === undefined ? undefined : revisionArg(args[1], usage);
    const zip = await client.projects.revisions.archive(args[0], number);
    const out = opts.out ?? `${args[0]}${number === undefined ? '' : `-r${number}`}.zip`;
    writeFileSync(out, zip);
    print(flags, { path: out, bytes: zip.length }, `Wrote ${out} (${zip.length} bytes).`);
    return 0;
  }
  throw new UsageError('codeloom projects list|create|files|templates|revisions|diff|restore|download');
}
