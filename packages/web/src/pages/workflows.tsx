import type { Workflow } from '@codeloom/client';
import { useState } from 'preact/hooks';
import { ErrorText, Pager, Select } from '../components/ui.js';
import { formatDate, useLoad, useSession } from '../hooks.js';
import { navigate } from '../router.js';
import { api, messageOf } from '../session.js';
import { RunView } from './run-view.js';

const AGENT_TYPES = ['planner', 'architect', 'coder', 'engineer', 'reviewer', 'tester', 'documenter'] as const;
type AgentType = (typeof AGENT_TYPES)[number];

/** Workflows (built from agent types) and runs; /runs/:id watches one run live. */
export function WorkflowsPage({ runId }: { runId?: string | undefined }) {
  return runId ? <RunView id={runId} /> : <WorkflowList />;
}

function WorkflowBuilder({ onCreated, environment }: { onCreated: (w: Workflow) => void; environment: string }) {
  const [agents, setAgents] = useState<AgentType[]>(['planner', 'coder']);
  const [next, setNext] = useState<AgentType>('reviewer');
  const [error, setError] = useState<string | null>(null);
  const models = useLoad(() => api().models.list(), [environment]);
  const create = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    const name = String(data.get('name'));
    const model = String(data.get('model') ?? '');
    setError(null);
    try {
      const w = await api().workflows.create({ name, agents: agents.map((type) => ({ type, ...(model ? { model } : {}) })) });
      form.reset();
      onCreated(w);
    } catch (e) {
      setError(messageOf(e));
    }
  };
  return (
    <form onSubmit={create} class="stack narrow">
      <label>Workflow name<input name="name" required maxLength={100} placeholder="plan and build" /></label>
      <fieldset>
        <legend>Steps, in order</legend>
        <ol>
          {agents.map((a, i) => (
            <li key={`${a}-${i}`} class="row">
              <span>{a}</span>
              <button type="button" class="secondary" aria-label={`Remove step ${i + 1} (${a})`} onClick={() => setAgents(agents.filter((_, j) => j !== i))}>Remove</button>
            </li>
          ))}
        </ol>
        <div class="row">
          <Select id="agent-type" label="Agent type" value={next} onChange={(v) => setNext(v as AgentType)}>
            {AGENT_TYPES.map((t) => <option key={t} value={t}>{t}</option>)}
          </Select>
          <button type="button" class="secondary" disabled={agents.length >= 12} onClick={() => setAgents([...agents, next])}>Add step</button>
        </div>
      </fieldset>
      <Select id="wf-model" name="model" label="Model for every step">
        <option value="">The default model</option>
        {models.data?.map((m) => <option key={m.id} value={m.id}>{m.id}</option>)}
      </Select>
      <ErrorText message={error ?? models.error} />
      <button type="submit" disabled={agents.length === 0}>Create workflow</button>
    </form>
  );
}

function WorkflowList() {
  const { environment } = useSession();
  const workflows = useLoad(async () => (await api().workflows.page(1, { limit: 100 })).data, [environment]);
  const [runPage, setRunPage] = useState(1);
  const runs = useLoad(() => api().runs.page(runPage, { limit: 10 }), [runPage, environment]);
  const [selected, setSelected] = useState('');
  const [error, setError] = useState<string | null>(null);
  const list = workflows.data ?? [];
  const chosen = selected || list[0]?.id || '';

  const execute = async (event: Event) => {
    event.preventDefault();
    const task = String(new FormData(event.currentTarget as HTMLFormElement).get('task'));
    setError(null);
    try {
      const run = await api().workflows.execute(chosen, { task });
      navigate(`/runs/${run.id}`);
    } catch (e) {
      setError(messageOf(e));
    }
  };

  return (
    <>
      <h1 tabIndex={-1}>Workflows</h1>
      <section aria-labelledby="new-wf">
        <h2 id="new-wf">New workflow</h2>
        <WorkflowBuilder environment={environment} onCreated={(w) => { setSelected(w.id); workflows.reload(); }} />
      </section>
      <section aria-labelledby="run-wf">
        <h2 id="run-wf">Run a workflow</h2>
        <ErrorText message={workflows.error} />
        {list.length === 0 ? <p class="muted">Create a workflow first.</p> : (
          <form onSubmit={execute} class="stack narrow">
            <Select id="workflow" label="Workflow" value={chosen} onChange={setSelected}>
              {list.map((w) => <option key={w.id} value={w.id}>{w.name}: {w.agents.map((a) => a.type).join(' → ')} ({w.agents[0]?.model})</option>)}
            </Select>
            <label>Task<textarea name="task" required maxLength={16000} rows={3} placeholder="REST API for todos" /></label>
            <ErrorText message={error} />
            <button type="submit">Run workflow</button>
          </form>
        )}
      </section>
      <section aria-labelledby="past-runs">
        <h2 id="past-runs">Runs</h2>
        <ErrorText message={runs.error} />
        {runs.data && runs.data.data.length === 0 && <p class="muted">No runs yet.</p>}
        {runs.data && runs.data.data.length > 0 && (
          <div class="table-wrap" tabIndex={0} role="group" aria-label="Runs table">
            <table>
              <thead><tr><th scope="col">Task</th><th scope="col">Status</th><th scope="col">Steps</th><th scope="col" class="num">Tokens</th><th scope="col">Started</th></tr></thead>
              <tbody>
                {runs.data.data.map((r) => (
                  <tr key={r.id}>
                    <th scope="row"><a href={`/dashboard/runs/${r.id}`}>{r.task.length > 60 ? `${r.task.slice(0, 60)}…` : r.task}</a></th>
                    <td><span class="badge" data-status={r.status}>{r.status}</span></td>
                    <td>{r.steps.map((s) => s.agent).join(' → ')}</td>
                    <td class="num">{r.tokens_used}</td>
                    <td>{formatDate(r.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {runs.data && <Pager label="Run pages" page={runPage} pages={runs.data.pagination.total_pages} onPage={setRunPage} />}
      </section>
    </>
  );
}
