import { useState } from 'preact/hooks';
import { Confirm, ErrorText, SecretOnce } from '../components/ui.js';
import { formatDate, useLoad } from '../hooks.js';
import { messageOf, rawApi, SessionError } from '../session.js';

const EVENTS: [type: string, meaning: string][] = [
  ['run.succeeded', 'a run succeeded'],
  ['run.failed', 'a run failed'],
  ['run.cancelled', 'a run was cancelled'],
  ['budget.threshold', 'a budget crossed an alert threshold'],
  ['budget.exceeded', 'a budget refused a call'],
];

interface Webhook { id: string; url: string; events: string[]; description: string; created_at: string }
interface CreatedWebhook extends Webhook { secret: string }
interface Delivery {
  id: string; event: string; event_id: string; status: 'pending' | 'succeeded' | 'failed'; attempts: number;
  response_status: number | null; last_error: string | null; next_attempt_at: string | null; created_at: string; delivered_at: string | null;
}

const STATUS_WORDS: Record<Delivery['status'], string> = { pending: 'Pending', succeeded: 'Delivered', failed: 'Failed' };

/** The server's message for the url field (a private host, not http(s)), else null. */
function urlError(error: unknown): string | null {
  if (!(error instanceof SessionError)) return null;
  const e = error.errors.find((x) => x.path.replace(/^body/, '') === '/url');
  return e ? e.message : null;
}

/** A webhook's latest deliveries, newest first (loaded when shown; Refresh loads them again). */
function Deliveries({ webhook }: { webhook: Webhook }) {
  const deliveries = useLoad(async () => (await rawApi<{ data: Delivery[] }>('GET', `/webhooks/${webhook.id}/deliveries?limit=20`)).data, [webhook.id]);
  const label = `Recent deliveries to ${webhook.url}`;
  return (
    <div class="stack">
      <div class="row">
        <h4 id={`d-${webhook.id}`}>Recent deliveries</h4>
        <button type="button" class="secondary" onClick={deliveries.reload}>Refresh</button>
      </div>
      <ErrorText message={deliveries.error} />
      {!deliveries.data && !deliveries.error && <p role="status">Loading…</p>}
      {deliveries.data && deliveries.data.length === 0 && <p class="muted">Nothing sent yet.</p>}
      {deliveries.data && deliveries.data.length > 0 && (
        <div class="table-wrap" tabIndex={0} role="group" aria-label={label}>
          <table aria-labelledby={`d-${webhook.id}`}>
            <thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">HTTP</th><th scope="col">Last error</th><th scope="col">Sent</th><th scope="col">Delivered</th></tr></thead>
            <tbody>
              {deliveries.data.map((d) => (
                <tr key={d.id} data-testid="delivery">
                  <th scope="row"><code>{d.event}</code></th>
                  <td class={d.status === 'failed' ? 'error' : undefined}>
                    {STATUS_WORDS[d.status]}{d.status === 'pending' && d.next_attempt_at ? ` (next try ${formatDate(d.next_attempt_at)})` : ''}
                  </td>
                  <td>{d.attempts}</td>
                  <td>{d.response_status ?? '—'}</td>
                  <td class="anywhere">{d.last_error ?? '—'}</td>
                  <td>{formatDate(d.created_at)}</td>
                  <td>{d.delivered_at ? formatDate(d.delivered_at) : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

/**
 * The organization's webhooks: add one (URL, events, description; its signing secret shown once), list them,
 * show each one's recent deliveries, delete with a confirmation. Webhooks belong to the organization, not to
 * an environment: runs of both environments are sent.
 */
export function WebhooksPage() {
  const webhooks = useLoad(async () => (await rawApi<{ data: Webhook[] }>('GET', '/webhooks')).data, []);
  const [created, setCreated] = useState<CreatedWebhook | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [fieldError, setFieldError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [open, setOpen] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<Webhook | null>(null);

  const create = async (event: Event) => {
    event.preventDefault();
    const formEl = event.currentTarget as HTMLFormElement;
    const form = new FormData(formEl);
    const events = form.getAll('events').map(String);
    setError(null); setFieldError(null);
    if (events.length === 0) { setError('Choose at least one event.'); return; }
    setBusy(true);
    try {
      const description = String(form.get('description') ?? '').trim();
      const hook = await rawApi<CreatedWebhook>('POST', '/webhooks', { url: String(form.get('url') ?? '').trim(), events, ...(description ? { description } : {}) });
      setCreated(hook);
      formEl.reset();
      webhooks.reload();
    } catch (e) {
      const f = urlError(e);
      setFieldError(f);
      setError(f ? null : messageOf(e));
    } finally {
      setBusy(false);
    }
  };

  const remove = async () => {
    const w = deleting;
    setDeleting(null);
    if (!w) return;
    try {
      await rawApi<void>('DELETE', `/webhooks/${w.id}`);
      if (open === w.id) setOpen(null);
      webhooks.reload();
    } catch (e) {
      setError(messageOf(e));
    }
  };

  return (
    <>
      <h1 tabIndex={-1}>Webhooks</h1>
      <p class="muted">
        Codeloom POSTs a signed JSON event to your URL when a run finishes or a budget alert fires. Check the
        <code> Codeloom-Signature</code> header with the webhook's secret; an answer other than 2xx within 10 seconds
        is retried for 24 hours.
      </p>
      <section aria-labelledby="new-webhook">
        <h2 id="new-webhook">New webhook</h2>
        <form onSubmit={create} class="stack narrow" noValidate>
          <div class="field">
            <label for="webhook-url">Endpoint URL</label>
            <input id="webhook-url" name="url" type="url" required maxLength={2048} placeholder="https://example.com/codeloom-events"
              aria-invalid={fieldError ? 'true' : undefined} aria-describedby={fieldError ? 'webhook-url-error' : undefined} />
            {fieldError && <p class="error" id="webhook-url-error">{fieldError}</p>}
          </div>
          <fieldset>
            <legend>Events</legend>
            {EVENTS.map(([type, meaning]) => (
              <label class="check" key={type}>
                <input type="checkbox" name="events" value={type} defaultChecked={type.startsWith('run.')} />
                <span><code>{type}</code><span class="muted"> — {meaning}</span></span>
              </label>
            ))}
          </fieldset>
          <div class="field">
            <label for="webhook-description">Description (optional)</label>
            <input id="webhook-description" name="description" maxLength={500} placeholder="Deploy bot" />
          </div>
          <ErrorText message={error} />
          <button type="submit" disabled={busy}>Add webhook</button>
        </form>
      </section>
      {created && <SecretOnce title={`Signing secret of ${created.url}`} value={created.secret} onDone={() => setCreated(null)} />}
      <section aria-labelledby="webhook-list">
        <h2 id="webhook-list">Your webhooks</h2>
        <ErrorText message={webhooks.error} />
        {!webhooks.data && !webhooks.error && <p role="status">Loading…</p>}
        {webhooks.data && webhooks.data.length === 0 && <p class="muted">No webhooks yet.</p>}
        {webhooks.data && webhooks.data.length > 0 && (
          <ul class="budgets" aria-label="Webhooks">
            {webhooks.data.map((w) => (
              <li class="card stack" key={w.id} data-testid="webhook" aria-labelledby={`h-${w.id}`}>
                <div class="budget-head">
                  <h3 id={`h-${w.id}`} class="anywhere">{w.url}</h3>
                  <span class="muted">Added {formatDate(w.created_at)}</span>
                </div>
                {w.description && <p>{w.description}</p>}
                <p class="muted">Events: {w.events.map((e, i) => <span key={e}>{i > 0 && ', '}<code>{e}</code></span>)}</p>
                <div class="row">
                  <button type="button" class="secondary" aria-expanded={open === w.id} onClick={() => setOpen(open === w.id ? null : w.id)}>
                    {open === w.id ? 'Hide deliveries' : 'Show deliveries'}
                  </button>
                  <button type="button" class="danger" onClick={() => setDeleting(w)}>Delete webhook</button>
                </div>
                {open === w.id && <Deliveries webhook={w} />}
              </li>
            ))}
          </ul>
        )}
      </section>
      <Confirm open={deleting !== null} title="Delete this webhook?" confirmLabel="Delete webhook" onConfirm={() => void remove()} onCancel={() => setDeleting(null)}>
        <p>Nothing more is sent to <code>{deleting?.url}</code>, and its delivery log is deleted with it.</p>
      </Confirm>
    </>
  );
}
