import { useState } from 'preact/hooks';
import { Confirm, ErrorText, SecretOnce, Select } from '../components/ui.js';
import { formatDate, useLoad } from '../hooks.js';
import { messageOf, rawApi } from '../session.js';

interface OAuthApp { id: string; client_id: string; name: string; type: 'confidential' | 'public'; redirect_uris: string[]; scopes: string[]; created_at: string; client_secret?: string }
interface Page<T> { data: T[] }

const lines = (text: string) => text.split('\n').map((l) => l.trim()).filter(Boolean);

/**
 * OAuth apps: register (a confidential app's secret shown once), edit
 * redirect URIs, delete. The SDK has no resource for /api/v1/oauth/clients
 * yet, so these are plain fetch calls with the same in-memory token.
 */
export function OAuthAppsPage() {
  const apps = useLoad(async () => (await rawApi<Page<OAuthApp>>('GET', '/oauth/clients?limit=100')).data, []);
  const [created, setCreated] = useState<OAuthApp | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<OAuthApp | null>(null);

  const register = async (event: Event) => {
    event.preventDefault();
    const formEl = event.currentTarget as HTMLFormElement;
    const form = new FormData(formEl);
    setError(null);
    try {
      const app = await rawApi<OAuthApp>('POST', '/oauth/clients', { name: String(form.get('name')), redirect_uris: lines(String(form.get('redirect_uris'))), type: String(form.get('type')) });
      setCreated(app);
      formEl.reset();
      apps.reload();
    } catch (e) {
      setError(messageOf(e));
    }
  };

  const save = async (event: Event, app: OAuthApp) => {
    event.preventDefault();
    const uris = lines(String(new FormData(event.currentTarget as HTMLFormElement).get('uris')));
    setError(null);
    try {
      await rawApi('PATCH', `/oauth/clients/${app.id}`, { redirect_uris: uris });
      setEditing(null);
      apps.reload();
    } catch (e) {
      setError(messageOf(e));
    }
  };

  const remove = async () => {
    const app = deleting;
    setDeleting(null);
    if (!app) return;
    try { await rawApi('DELETE', `/oauth/clients/${app.id}`); apps.reload(); } catch (e) { setError(messageOf(e)); }
  };

  return (
    <>
      <h1 tabIndex={-1}>OAuth apps</h1>
      <p class="muted">Apps that sign people in with their Codeloom account (authorization code flow with PKCE; see /.well-known/oauth-authorization-server).</p>
      <section aria-labelledby="new-app">
        <h2 id="new-app">Register an app</h2>
        <form onSubmit={register} class="stack narrow">
          <label>App name<input name="name" required maxLength={100} /></label>
          <label>Redirect URIs<textarea name="redirect_uris" required rows={3} placeholder="https://app.example.com/callback" aria-describedby="uri-hint" /></label>
          <p id="uri-hint" class="muted">One per line: https, or http on 127.0.0.1 / localhost.</p>
          <Select id="app-type" name="type" label="App type">
            <option value="confidential">Confidential (a server that keeps a secret)</option>
            <option value="public">Public (browser or native app, PKCE, no secret)</option>
          </Select>
          <button type="submit">Register app</button>
        </form>
      </section>
      <ErrorText message={error ?? apps.error} />
      {created && (created.client_secret
        ? <SecretOnce title={`Client secret of “${created.name}” (client id ${created.client_id})`} value={created.client_secret} onDone={() => setCreated(null)} />
        : <p role="status" class="card">Registered “{created.name}”: client id <code>{created.client_id}</code> (public: no secret).</p>)}
      <section aria-labelledby="app-list">
        <h2 id="app-list">Your apps</h2>
        {apps.data && apps.data.length === 0 && <p class="muted">No apps yet.</p>}
        <ul class="cards">
          {apps.data?.map((app) => (
            <li class="card" key={app.id}>
              <h3>{app.name}</h3>
              <p>Client id <code>{app.client_id}</code> · {app.type} · {app.scopes.join(', ')} · {formatDate(app.created_at)}</p>
              {editing === app.id ? (
                <form onSubmit={(e) => void save(e, app)} class="stack">
                  <label>Redirect URIs of {app.name}<textarea name="uris" rows={3} required defaultValue={app.redirect_uris.join('\n')} /></label>
                  <div class="row">
                    <button type="submit">Save redirect URIs</button>
                    <button type="button" class="secondary" onClick={() => setEditing(null)}>Cancel</button>
                  </div>
                </form>
              ) : (
                <>
                  <ul aria-label={`Redirect URIs of ${app.name}`}>{app.redirect_uris.map((u) => <li key={u}><code>{u}</code></li>)}</ul>
                  <div class="row">
                    <button type="button" class="secondary" onClick={() => setEditing(app.id)}>Edit redirect URIs</button>
                    <button type="button" class="danger" onClick={() => setDeleting(app)}>Delete</button>
                  </div>
                </>
              )}
            </li>
          ))}
        </ul>
      </section>
      <Confirm open={deleting !== null} title={`Delete “${deleting?.name ?? ''}”?`} confirmLabel="Delete app" onConfirm={() => void remove()} onCancel={() => setDeleting(null)}>
        <p>Every token the app holds stops working at once. This cannot be undone.</p>
      </Confirm>
    </>
  );
}
