import { useMemo, useState } from 'preact/hooks';
import { FileBrowser } from '../components/file-browser.js';
import { Confirm, ErrorText, Pager, Select } from '../components/ui.js';
import { formatDate, useLoad, useSession } from '../hooks.js';
import { navigate } from '../router.js';
import { api, messageOf } from '../session.js';

const PAGE_SIZE = 10;

/** Projects: a paged list and a create form (optionally from a template); /projects/:id browses a project's files. */
export function ProjectsPage({ projectId }: { projectId?: string | undefined }) {
  return projectId ? <ProjectDetail id={projectId} /> : <ProjectList />;
}

function ProjectList() {
  const { environment } = useSession();
  const [page, setPage] = useState(1);
  const projects = useLoad(() => api().projects.page(page, { limit: PAGE_SIZE }), [page, environment]);
  const templates = useLoad(() => api().templates.list(), []);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const create = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const template = String(form.get('template') ?? '');
    const description = String(form.get('description') ?? '').trim();
    setBusy(true);
    setError(null);
    try {
      const project = await api().projects.create({ name: String(form.get('name')), ...(description ? { description } : {}), ...(template ? { template } : {}) });
      navigate(`/projects/${project.id}`);
    } catch (e) {
      setError(messageOf(e));
      setBusy(false);
    }
  };

  const data = projects.data;
  return (
    <>
      <h1 tabIndex={-1}>Projects</h1>
      <section aria-labelledby="new-project">
        <h2 id="new-project">New project</h2>
        <form onSubmit={create} class="stack narrow">
          <label>Project name<input name="name" required maxLength={100} /></label>
          <label>Description<input name="description" maxLength={2000} /></label>
          <Select id="template" label="Template">
            <option value="">Empty project</option>
            {templates.data?.map((t) => <option key={t.id} value={t.id}>{t.name} ({t.language})</option>)}
          </Select>
          <ErrorText message={error ?? templates.error} />
          <button type="submit" disabled={busy}>Create project</button>
        </form>
      </section>
      <section aria-labelledby="project-list">
        <h2 id="project-list">Your projects{data ? ` (${data.pagination.total})` : ''}</h2>
        <ErrorText message={projects.error} />
        {data && data.data.length === 0 && <p class="muted">No projects yet.</p>}
        {data && data.data.length > 0 && (
          <ul class="cards">
            {data.data.map((p) => (
              <li class="card" key={p.id}>
                <h3><a href={`/dashboard/projects/${p.id}`}>{p.name}</a></h3>
                <p class="muted">{p.description || 'No description'}</p>
                <p>{p.files_count} files · {p.template ? `template ${p.template}` : 'no template'} · updated {formatDate(p.updated_at)}</p>
              </li>
            ))}
          </ul>
        )}
        {data && <Pager label="Project pages" page={page} pages={data.pagination.total_pages} onPage={setPage} />}
      </section>
    </>
  );
}

function ProjectDetail({ id }: { id: string }) {
  const [version, setVersion] = useState(0);
  const project = useLoad(() => api().projects.get(id), [id, version]);
  const files = useLoad(async () => {
    const all = [];
    for await (const f of api().projects.files.list(id, { limit: 100 })) all.push(f);
    return all;
  }, [id, version]);
  const p = project.data;
  const listed = useMemo(() => files.data?.map((f) => ({ path: f.path })) ?? [], [files.data]);
  return (
    <>
      <p><a href="/dashboard/projects">← All projects</a></p>
      <h1 tabIndex={-1}>{p ? p.name : 'Project'}</h1>
      <ErrorText message={project.error ?? files.error} />
      {p && <p class="muted">{p.description || 'No description'} · {p.template ? `from template ${p.template}` : 'no template'} · created {formatDate(p.created_at)}</p>}
      {files.data && files.data.length === 0 && <p class="muted">This project has no files yet.</p>}
      {files.data && files.data.length > 0 && (
        <FileBrowser key={version} label="Project files" files={listed} load={async (path) => (await api().projects.files.get(id, path)).content} />
      )}
      {p && <History projectId={id} projectName={p.name} version={version} onRestored={() => setVersion((v) => v + 1)} />}
    </>
  );
}

/** Saves bytes (a zip from the server) as a download in the browser. */
function saveBytes(bytes: Uint8Array, name: string) {
  const url = URL.createObjectURL(new Blob([bytes as Uint8Array<ArrayBuffer>], { type: 'application/zip' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

const zipName = (name: string, rev?: number) => `${name.normalize('NFKD').replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[-.]+|-+$/g, '').slice(0, 60) || 'project'}${rev === undefined ? '' : `-r${rev}`}.zip`;

/** A unified diff, each line marked as added, removed, a hunk header or context. */
function Diff({ text, label }: { text: string; label: string }) {
  const lines = text.replace(/\n$/, '').split('\n');
  return (
    <pre class="diff" aria-label={label} tabIndex={0}>
      <code>{lines.map((l, i) => {
        const kind = l.startsWith('+++') || l.startsWith('---') ? 'file' : l.startsWith('@@') ? 'hunk' : l.startsWith('+') ? 'add' : l.startsWith('-') ? 'del' : 'ctx';
        return <span key={i} class={`diff-${kind}`}>{l}{'\n'}</span>;
      })}</code>
    </pre>
  );
}

/** A project's revisions, newest first: each one's changes (diffs), restore (after a confirmation), and a zip of it. */
function History({ projectId, projectName, version, onRestored }: { projectId: string; projectName: string; version: number; onRestored: () => void }) {
  const [page, setPage] = useState(1);
  const revisions = useLoad(() => api().projects.revisions.page(projectId, page, { limit: PAGE_SIZE }), [projectId, page, version]);
  const [shown, setShown] = useState<number | null>(null);
  const detail = useLoad(async () => (shown === null ? null : api().projects.revisions.get(projectId, shown)), [projectId, shown]);
  const [restoring, setRestoring] = useState<number | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const download = async (rev?: number) => {
    setError(null);
    try {
      saveBytes(await api().projects.revisions.archive(projectId, rev), zipName(projectName, rev));
    } catch (e) {
      setError(messageOf(e));
    }
  };
  const restore = async () => {
    const rev = restoring;
    setRestoring(null);
    if (rev === null) return;
    setError(null);
    try {
      const latest = revisions.data?.data[0]?.number;
      const made = await api().projects.revisions.restore(projectId, rev);
      setNotice(made.number === latest ? `The files already are as at revision ${rev}.` : `Restored revision ${rev} as revision ${made.number}.`);
      setPage(1);
      setShown(made.number);
      onRestored();
    } catch (e) {
      setError(messageOf(e));
    }
  };

  const data = revisions.data;
  return (
    <section aria-labelledby="history">
      <h2 id="history">History{data ? ` (${data.pagination.total} revisions)` : ''}</h2>
      <p><button type="button" class="secondary" onClick={() => void download()}>Download current files</button></p>
      <ErrorText message={error ?? revisions.error} />
      {notice && <p class="success" role="status">{notice}</p>}
      {data && (
        <div class="table-wrap">
          <table aria-label="Revisions">
            <thead><tr><th scope="col">Revision</th><th scope="col">Change</th><th scope="col">Author</th><th scope="col">Files</th><th scope="col">When</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
            <tbody>
              {data.data.map((r) => (
                <tr key={r.id} data-testid="revision">
                  <td>r{r.number}</td>
                  <td>{r.message}</td>
                  <td>{r.author?.name ?? '—'}</td>
                  <td>{r.files_changed}</td>
                  <td>{formatDate(r.created_at)}</td>
                  <td><div class="row">
                    <button type="button" class="secondary" aria-pressed={shown === r.number} onClick={() => setShown(shown === r.number ? null : r.number)}>{`Changes in r${r.number}`}</button>
                    <button type="button" class="secondary" onClick={() => setRestoring(r.number)}>{`Restore r${r.number}`}</button>
                    <button type="button" class="secondary" onClick={() => void download(r.number)}>{`Download r${r.number}`}</button>
                  </div></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {data && <Pager label="Revision pages" page={page} pages={data.pagination.total_pages} onPage={setPage} />}
      {shown !== null && (
        <section aria-labelledby="revision-changes">
          <h3 id="revision-changes">Changes in revision {shown}</h3>
          <ErrorText message={detail.error} />
          {detail.data && detail.data.files.length === 0 && <p class="muted">This revision changed no files.</p>}
          {detail.data?.files.map((f) => (
            <figure key={f.path} class="diff-figure">
              <figcaption><code>{f.path}</code> · {f.status}</figcaption>
              <Diff text={f.diff} label={`Diff of ${f.path}`} />
            </figure>
          ))}
        </section>
      )}
      <Confirm open={restoring !== null} title={`Restore revision ${restoring ?? ''}?`} confirmLabel="Restore" onConfirm={() => void restore()} onCancel={() => setRestoring(null)}>
        <p>The files become as they were right after revision {restoring}: a new revision, so nothing is lost.</p>
      </Confirm>
    </section>
  );
}
