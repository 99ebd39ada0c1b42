import type { ApiKey, CreatedApiKey } from '@codeloom/client';
import { useEffect, useState } from 'preact/hooks';
import { KeyLimitInputs, formatLimits, limitsFrom } from '../components/key-limits.js';
import { Confirm, ErrorText, SecretOnce, Select } from '../components/ui.js';
import { formatDate, useLoad, useSession } from '../hooks.js';
import { api, messageOf } from '../session.js';

const ALL_SCOPES = ['read:code', 'write:code', 'deploy:apps'] as const;
const EXPIRY: [string, number | null][] = [['Never', null], ['In 7 days', 7], ['In 30 days', 30], ['In 90 days', 90], ['In 1 year', 365]];

/** API keys of the chosen environment: create (secret shown once), list, revoke with a confirmation. */
export function KeysPage() {
  const { environment } = useSession();
  const keys = useLoad(async () => (await api().apiKeys.page(1, { limit: 100 })).data, [environment]);
  const profile = useLoad(() => api().user.profile(), []);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const allowed = profile.data?.permissions ?? ['read:code', 'write:code'];
  useEffect(() => { setCreated(null); setError(null); }, [environment]); // a secret never lingers across the switch

  const create = async (event: Event) => {
    event.preventDefault();
    const formEl = event.currentTarget as HTMLFormElement;
    const form = new FormData(formEl);
    const days = Number(form.get('expiry')) || null;
    const scopes = form.getAll('scopes').map(String) as ApiKey['scopes'];
    if (scopes.length === 0) { setError('Choose at least one scope.'); return; }
    setBusy(true);
    setError(null);
    try {
      const key = await api().apiKeys.create({
        name: String(form.get('name')), scopes, environment,
        ...(days ? { expires_at: new Date(Date.now() + days * 86_400_000).toISOString() } : {}),
        ...limitsFrom(form),
      });
      setCreated(key);
      formEl.reset();
      keys.reload();
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };

  const revoke = async () => {
    const key = revoking;
    setRevoking(null);
    if (!key) return;
    try {
      await api().apiKeys.revoke(key.id);
      keys.reload();
    } catch (e) {
      setError(messageOf(e));
    }
  };

  return (
    <>
      <h1 tabIndex={-1}>API keys</h1>
      <p class="muted">
        {environment === 'production'
          ? 'Production keys start with cl_live_ and use your plan\'s models and quota.'
          : 'Sandbox keys start with cl_test_ and only reach the offline sandbox model; they never spend quota.'}
      </p>
      <section aria-labelledby="new-key">
        <h2 id="new-key">New {environment} key</h2>
        <form onSubmit={create} class="stack narrow">
          <label>Key name<input name="name" required maxLength={100} placeholder="ci" /></label>
          <fieldset>
            <legend>Scopes</legend>
            {ALL_SCOPES.map((s) => (
              <label class="check" key={s}>
                <input type="checkbox" name="scopes" value={s} defaultChecked={s !== 'deploy:apps' && allowed.includes(s)} disabled={!allowed.includes(s)} />
                {s}{!allowed.includes(s) && <span class="muted"> (not in your plan)</span>}
              </label>
            ))}
          </fieldset>
          <Select id="expiry" label="Expires">{EXPIRY.map(([label, days]) => <option key={label} value={days ?? ''}>{label}</option>)}</Select>
          <KeyLimitInputs profile={profile.data} sandbox={environment === 'sandbox'} />
          <ErrorText message={error} />
          <button type="submit" disabled={busy}>Create API key</button>
        </form>
      </section>
      {created && created.environment === environment && <SecretOnce title={`Your new key “${created.name}”`} value={created.key} onDone={() => setCreated(null)} />}
      <section aria-labelledby="key-list">
        <h2 id="key-list">Your {environment} keys</h2>
        <ErrorText message={keys.error} />
        {keys.data && keys.data.length === 0 && <p class="muted">No {environment} keys yet.</p>}
        {keys.data && keys.data.length > 0 && (
          <div class="table-wrap" tabIndex={0} role="group" aria-label="API keys table">
            <table>
              <thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Scopes</th><th scope="col">Limits</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
              <tbody>
                {keys.data.map((k) => (
                  <tr key={k.id}>
                    <th scope="row">{k.name}</th>
                    <td><code>{k.prefix}…</code></td>
                    <td>{k.scopes.join(', ')}</td>
                    <td>{formatLimits(k.limits)}</td>
                    <td>{formatDate(k.created_at)}</td>
                    <td>{k.last_used_at ? formatDate(k.last_used_at) : 'Never'}</td>
                    <td>{k.expires_at ? formatDate(k.expires_at) : 'Never'}</td>
                    <td><button type="button" class="danger" onClick={() => setRevoking(k)} aria-describedby={undefined}>Revoke</button></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <Confirm open={revoking !== null} title={`Revoke “${revoking?.name ?? ''}”?`} confirmLabel="Revoke key" onConfirm={() => void revoke()} onCancel={() => setRevoking(null)}>
        <p>Every program using <code>{revoking?.prefix}…</code> is refused from now on. This cannot be undone.</p>
      </Confirm>
    </>
  );
}
