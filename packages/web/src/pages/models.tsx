import { useState } from 'preact/hooks';
import { Confirm, ErrorText } from '../components/ui.js';
import { formatDate, useLoad } from '../hooks.js';
import { api, messageOf, rawApi, SessionError } from '../session.js';

interface DeploymentModel { id: string; upstream_model?: string; fim?: boolean; embeddings?: boolean; price: { input: number; output: number; cached_input?: number } }
interface Deployment {
  id: string; name: string; provider: 'openai' | 'anthropic'; base_url: string; has_api_key: boolean; models: DeploymentModel[];
  weight: number; rpm: number | null; tpm: number | null; enabled: boolean; read_only: boolean;
  health: { status: 'ok' | 'cooling_down' | 'disabled'; consecutive_failures: number; cooldown_until: string | null; latency_ms: number | null };
}
interface TestResult { ok: boolean; model: string; latency_ms: number; error?: { code: string; message: string } }

const HEALTH_WORDS: Record<Deployment['health']['status'], string> = { ok: 'Healthy', cooling_down: 'Cooling down', disabled: 'Disabled' };

/** Where to point a deployment, for the servers people run (docs/models.md has more). */
const EXAMPLES: Array<{ name: string; provider: 'openai' | 'anthropic'; baseUrl: string; model: string; note: string }> = [
  { name: 'Ollama', provider: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', model: 'qwen2.5-coder:7b', note: 'ollama pull qwen2.5-coder:7b, then ollama serve. No API key.' },
  { name: 'vLLM', provider: 'openai', baseUrl: 'http://gpu-box:8000/v1', model: 'Qwen/Qwen2.5-Coder-7B-Instruct', note: 'vllm serve Qwen/Qwen2.5-Coder-7B-Instruct. The API key is the one given with --api-key, if any.' },
  { name: 'llama.cpp server', provider: 'openai', baseUrl: 'http://127.0.0.1:8080/v1', model: 'local-gguf', note: 'llama-server -m model.gguf --port 8080. Any model id works; tick fill-in-the-middle for a FIM model.' },
  { name: 'OpenAI', provider: 'openai', baseUrl: 'https://api.openai.com/v1', model: 'gpt-4o-mini', note: 'With your OpenAI API key; set its price (USD per million tokens) so usage and budgets count dollars.' },
  { name: 'Anthropic', provider: 'anthropic', baseUrl: 'https://api.anthropic.com/v1', model: 'claude-sonnet-4-5', note: 'Provider anthropic, with your Anthropic API key.' },
];

/** The field a 400 named, as the server said it (for the form). */
const fieldErrors = (error: unknown): string => (error instanceof SessionError && error.errors.length ? error.errors.map((e) => `${e.path.replace(/^body/, '')}: ${e.message}`).join('; ') : messageOf(error));

function HowToConnect({ onUse }: { onUse?: ((example: (typeof EXAMPLES)[number]) => void) | undefined }) {
  return (
    <section aria-labelledby="how-h" class="stack">
      <h2 id="how-h">How to connect a model</h2>
      <p>A deployment is one model server: its provider (<code>openai</code> for anything OpenAI-compatible, <code>anthropic</code> for the Messages API), its base URL, an API key if it needs one, and the models it serves. Several deployments may serve one model id: calls are shared by weight among the healthy ones.</p>
      <ul class="examples">
        {EXAMPLES.map((ex) => (
          <li key={ex.name} data-testid="example">
            <strong>{ex.name}</strong>: provider <code>{ex.provider}</code>, base URL <code>{ex.baseUrl}</code>, model <code>{ex.model}</code>. {ex.note}
            {onUse && <> <button type="button" class="secondary" onClick={() => onUse(ex)}>Use {ex.name}</button></>}
          </li>
        ))}
      </ul>
      <p class="muted">From a terminal: <code>codeloom deployments add --name ollama --provider openai --url http://127.0.0.1:11434/v1 --models qwen2.5-coder:7b</code></p>
    </section>
  );
}

/**
 * Models and their deployments. Everyone sees the models this server offers (the template model `sandbox`
 * marked as such) and how to connect a real one; administrators also add, test, enable or disable and remove
 * deployments, and see each one's health.
 */
export function ModelsPage() {
  const models = useLoad(() => api().models.list(), []);
  const deployments = useLoad(async () => {
    try {
      return (await rawApi<{ data: Deployment[] }>('GET', '/admin/deployments')).data;
    } catch (error) {
      if (error instanceof SessionError && error.status === 403) return null; // not an administrator
      throw error;
    }
  }, []);
  const [tests, setTests] = useState<Record<string, TestResult | 'running'>>({});
  const [error, setError] = useState<string | null>(null);
  const [removing, setRemoving] = useState<Deployment | null>(null);
  const [form, setForm] = useState({ name: '', provider: 'openai', base_url: '', api_key: '', model: '', upstream: '', input: '0', output: '0', fim: false });
  const [busy, setBusy] = useState(false);
  const onlySandbox = models.data !== undefined && models.data.every((m) => m.id === 'sandbox');
  const isAdmin = deployments.data !== null && deployments.data !== undefined;

  const reload = () => { deployments.reload(); models.reload(); };
  const test = async (d: Deployment) => {
    setTests((t) => ({ ...t, [d.id]: 'running' }));
    try {
      const result = await rawApi<TestResult>('POST', `/admin/deployments/${d.id}/test`);
      setTests((t) => ({ ...t, [d.id]: result }));
      deployments.reload();
    } catch (e) {
      setTests((t) => ({ ...t, [d.id]: { ok: false, model: d.models[0]?.id ?? '', latency_ms: 0, error: { code: 'error', message: messageOf(e) } } }));
    }
  };
  const toggle = async (d: Deployment) => {
    setError(null);
    try { await rawApi('PATCH', `/admin/deployments/${d.id}`, { enabled: !d.enabled }); reload(); } catch (e) { setError(messageOf(e)); }
  };
  const remove = async () => {
    const d = removing!;
    setRemoving(null);
    try { await rawApi('DELETE', `/admin/deployments/${d.id}`); reload(); } catch (e) { setError(messageOf(e)); }
  };
  const add = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await rawApi('POST', '/admin/deployments', {
        name: form.name, provider: form.provider, base_url: form.base_url, ...(form.api_key ? { api_key: form.api_key } : {}),
        models: [{ id: form.model, ...(form.upstream ? { upstream_model: form.upstream } : {}), ...(form.fim ? { fim: true } : {}), price: { input: Number(form.input), output: Number(form.output) } }],
      });
      setForm({ ...form, name: '', api_key: '', model: '', upstream: '' });
      reload();
    } catch (e) {
      setError(fieldErrors(e));
    } finally {
      setBusy(false);
    }
  };
  const set = (key: keyof typeof form) => (e: Event) => {
    const el = e.currentTarget as HTMLInputElement;
    setForm({ ...form, [key]: el.type === 'checkbox' ? el.checked : el.value });
  };

  return (
    <>
      <h1 tabIndex={-1}>Models</h1>
      <section aria-labelledby="models-h" class="stack">
        <h2 id="models-h">Models on this server</h2>
        <ErrorText message={models.error} />
        <ul data-testid="model-list">
          {models.data?.map((m) => (
            <li key={m.id}>
              <code>{m.id}</code>{m.default ? ' (default)' : ''}: {m.id === 'sandbox' ? <strong>the template model: runnable code skeletons, not AI.</strong> : m.description}
            </li>
          ))}
        </ul>
        {onlySandbox && <p class="notice" role="note">Only the template model <code>sandbox</code> is connected: it shapes runnable skeletons from your prompt, but it is not a language model. {isAdmin ? 'Add a deployment below to connect a real model.' : 'Ask an administrator of this server to connect a real model.'}</p>}
      </section>
      {deployments.data === null && <p class="muted">Deployments are managed by the server's administrators.</p>}
      {isAdmin && (
        <section aria-labelledby="dep-h" class="stack">
          <h2 id="dep-h">Deployments</h2>
          <ErrorText message={error ?? deployments.error} />
          <div class="table-wrap" tabIndex={0} role="group" aria-label="Deployments">
            <table aria-labelledby="dep-h">
              <thead><tr><th scope="col">Name</th><th scope="col">Provider and URL</th><th scope="col">Models</th><th scope="col">Weight</th><th scope="col">Health</th><th scope="col">Actions</th></tr></thead>
              <tbody>
                {deployments.data!.map((d) => {
                  const t = tests[d.id];
                  return (
                    <tr key={d.id} data-testid="deployment">
                      <th scope="row">{d.name}{d.read_only ? ' (environment)' : ''}</th>
                      <td class="anywhere"><code>{d.provider}</code> {d.base_url}{d.has_api_key ? ' · key set' : ''}</td>
                      <td>{d.models.map((m) => m.id).join(', ')}</td>
                      <td>{d.weight}</td>
                      <td data-testid="health">
                        {HEALTH_WORDS[d.health.status]}{d.health.consecutive_failures ? `, ${d.health.consecutive_failures} failures in a row` : ''}
                        {d.health.cooldown_until ? ` until ${formatDate(d.health.cooldown_until)}` : ''}{d.health.latency_ms !== null ? ` · ${d.health.latency_ms} ms` : ''}
                      </td>
                      <td>
                        <div class="row">
                          <button type="button" class="secondary" onClick={() => test(d)} disabled={t === 'running'} aria-label={`Test ${d.name}`}>Test</button>
                          {!d.read_only && <button type="button" class="secondary" onClick={() => toggle(d)}>{d.enabled ? 'Disable' : 'Enable'}</button>}
                          {!d.read_only && <button type="button" class="danger" onClick={() => setRemoving(d)} aria-label={`Remove ${d.name}`}>Remove</button>}
                        </div>
                        {t && <p role="status" data-testid="test-result" class={t !== 'running' && !t.ok ? 'error' : undefined}>
                          {t === 'running' ? 'Testing…' : t.ok ? `OK: ${t.model} answered in ${t.latency_ms} ms` : `Failed: ${t.error?.message ?? 'error'}`}
                        </p>}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          <form onSubmit={add} class="stack" aria-labelledby="add-h">
            <h3 id="add-h">Add a deployment</h3>
            <div class="grid">
              <label>Name<input name="name" required maxLength={200} value={form.name} onInput={set('name')} /></label>
              <label>Provider<select name="provider" value={form.provider} onChange={set('provider')}><option value="openai">openai (OpenAI-compatible)</option><option value="anthropic">anthropic</option></select></label>
              <label>Base URL<input name="base_url" required placeholder="http://127.0.0.1:11434/v1" value={form.base_url} onInput={set('base_url')} /></label>
              <label>API key<input name="api_key" type="password" autoComplete="off" placeholder="none" value={form.api_key} onInput={set('api_key')} /></label>
              <label>Model id<input name="model" required placeholder="qwen2.5-coder:7b" value={form.model} onInput={set('model')} /></label>
              <label>Upstream name<input name="upstream" placeholder="same as the id" value={form.upstream} onInput={set('upstream')} /></label>
              <label>Input price (USD / M tokens)<input name="input" type="number" min="0" step="any" value={form.input} onInput={set('input')} /></label>
              <label>Output price (USD / M tokens)<input name="output" type="number" min="0" step="any" value={form.output} onInput={set('output')} /></label>
              <label class="check"><input type="checkbox" name="fim" checked={form.fim} onChange={set('fim')} /> Fill-in-the-middle</label>
            </div>
            <div class="row"><button type="submit" disabled={busy}>Add deployment</button></div>
          </form>
        </section>
      )}
      <HowToConnect onUse={isAdmin ? (ex) => setForm({ ...form, name: ex.name.toLowerCase().replace(/[^a-z0-9]+/g, '-'), provider: ex.provider, base_url: ex.baseUrl, model: ex.model }) : undefined} />
      <Confirm open={removing !== null} title={`Remove ${removing?.name ?? ''}?`} confirmLabel="Remove" onConfirm={remove} onCancel={() => setRemoving(null)}>
        <p>Calls stop going to it on every instance within seconds. Its models disappear when no other deployment serves them.</p>
      </Confirm>
    </>
  );
}
