import { useMemo, useState } from 'preact/hooks';
import { FileBrowser } from '../components/file-browser.js';
import { ErrorText, Pager, Select } from '../components/ui.js';
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
  const project = useLoad(() => api().projects.get(id), [id]);
  const files = useLoad(async () => {
    const all = [];
    for await (const f of api().projects.files.list(id, { limit: 100 })) all.push(f);
    return all;
  }, [id]);
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
        <FileBrowser label="Project files" files={listed} load={async (path) => (await api().projects.files.get(id, path)).content} />
      )}
    </>
  );
}
