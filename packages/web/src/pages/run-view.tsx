import type { Run, RunStep } from '@codeloom/client';
import { useEffect, useState } from 'preact/hooks';
import { FileBrowser } from '../components/file-browser.js';
import { ErrorText } from '../components/ui.js';
import { WaitNotice, waitHeadline, type Wait } from '../components/waiting.js';
import { formatDate } from '../hooks.js';
import { api, messageOf } from '../session.js';

const FINAL = new Set(['succeeded', 'failed', 'cancelled']);

/** The run record's `waiting` (set while the run waits for a window or a budget before its next step). */
interface RunWaiting { code: string; message: string; until: string }
const waitingOf = (run: Run | null): RunWaiting | null => (run as (Run & { waiting?: RunWaiting | null }) | null)?.waiting ?? null;
/** A wait whose time has passed is over once the run shows progress again (in case no run_waiting with `waiting: null` came). */
const clearPastWait = (r: Run | null): Run | null => {
  const w = waitingOf(r);
  return r && w && Date.parse(w.until) <= Date.now() ? ({ ...r, waiting: null } as Run) : r;
};
/** Words for a run's error code; the code itself is shown beside them. */
const ERROR_WORDS: Record<string, string> = { budget_exceeded: 'Budget reached', rate_limited: 'Rate limit reached', cancelled: 'Cancelled' };

/** One run, live: each step's status and streaming output over the WebSocket channel; Cancel run while it runs; its files once done. */
export function RunView({ id }: { id: string }) {
  const [run, setRun] = useState<Run | null>(null);
  const [live, setLive] = useState<Record<number, string>>({});
  const [tools, setTools] = useState<Record<number, ToolEntry[]>>({});
  const [error, setError] = useState<string | null>(null);
  const [watching, setWatching] = useState(false);

  useEffect(() => {
    let stopped = false;
    const watch = api().runs.watch(id);
    const patchStep = (index: number, patch: Partial<RunStep>) => setRun((r) => {
      if (!r) return r;
      const steps = [...r.steps];
      const at = steps.findIndex((s) => s.index === index);
      if (at >= 0) steps[at] = { ...steps[at]!, ...patch };
      else steps.push({ index, agent: 'coder', model: '', status: 'running', output: '', tokens_used: 0, started_at: null, finished_at: null, iteration: 0, ...patch } as RunStep);
      return { ...r, steps };
    });
    (async () => {
      try {
        setRun(await api().runs.get(id));
        setWatching(true);
        for await (const event of watch) {
          if (stopped) break;
          if (event.event === 'run_started' || event.event === 'complete' || event.event === 'run_waiting') setRun(event.data);
          else if (event.event === 'step_started') {
            // A step running means the run is (the run_started event may have gone out before this page subscribed).
            setRun((r) => (r && r.status === 'queued' ? { ...r, status: 'running' } : r));
            patchStep(event.data.index, { status: 'running', agent: event.data.agent as RunStep['agent'], model: event.data.model });
          }
          // The server clears `waiting` when the step starts (step_started carries no run record).
          if (event.event === 'step_started') setRun((r) => (r && waitingOf(r) ? ({ ...r, waiting: null } as Run) : r));
          else if (event.event === 'token' || event.event === 'step_completed') setRun(clearPastWait);
          if (event.event === 'token') setLive((l) => ({ ...l, [event.step]: (l[event.step] ?? '') + event.data }));
          else if (event.event === 'step_completed') patchStep(event.data.index, event.data.step);
          else if (event.event === 'error' && event.data.run) setRun(event.data.run);
          else if (event.event === 'tool_call') {
            const d = event.data;
            setTools((t) => (t[d.index]?.some((e) => e.call_id === d.call_id) ? t : { ...t, [d.index]: [...(t[d.index] ?? []), { call_id: d.call_id, step: d.step, name: d.name, arguments: d.arguments }] }));
          } else if (event.event === 'tool_result') {
            const d = event.data;
            setTools((t) => ({ ...t, [d.index]: (t[d.index] ?? []).map((e) => (e.call_id === d.call_id ? { ...e, result: { ok: d.ok, output: d.output, duration_ms: d.duration_ms } } : e)) }));
          }
        }
        const final = await watch.result;
        if (!stopped) setRun(final);
      } catch (e) {
        if (!stopped) setError(messageOf(e));
      } finally {
        if (!stopped) setWatching(false);
      }
    })();
    return () => { stopped = true; watch.close(); };
  }, [id]);

  const cancel = async () => {
    try { setRun(await api().runs.cancel(id)); } catch (e) { setError(messageOf(e)); }
  };

  const done = run ? FINAL.has(run.status) : false;
  const waiting = done ? null : waitingOf(run);
  const wait: Wait | null = waiting ? { code: waiting.code, message: waiting.message, until: Date.parse(waiting.until) || null } : null;
  return (
    <>
      <p><a href="/dashboard/workflows">← Workflows and runs</a></p>
      <h1 tabIndex={-1}>Run {id}</h1>
      <ErrorText message={error} />
      {run && (
        <>
          <p class="row">
            <span>Status: <span class="badge" data-status={run.status} data-testid="run-status">{run.status}</span></span>
            <span class="muted">{run.tokens_used} tokens{run.cost_usd ? ` · $${run.cost_usd.toFixed(6)}` : ''}{ceilingsText(run.limits)} · started {formatDate(run.started_at ?? run.created_at)}{run.finished_at ? ` · finished ${formatDate(run.finished_at)}` : ''}</span>
            {watching && !done && <span class="muted">(live)</span>}
          </p>
          <p><strong>Task:</strong> {run.task}</p>
          {!done && <button type="button" class="danger" onClick={() => void cancel()}>Cancel run</button>}
          {/* Announced once when the run starts or stops waiting; the notice below counts down. */}
          <p class="visually-hidden" role="status">{wait ? waitHeadline(wait, 'waiting') : ''}</p>
          {wait && <WaitNotice wait={wait} mode="waiting" label="The run is waiting" />}
          {run.error && (
            <p class="error" data-testid="run-error">
              {ERROR_WORDS[run.error.code] ? <>{ERROR_WORDS[run.error.code]}: {run.error.message} <span class="muted">({run.error.code})</span></> : <>{run.error.code}: {run.error.message}</>}
            </p>
          )}
          <h2>Steps</h2>
          <ol class="steps" aria-label="Steps">
            {run.steps.map((s) => (
              <li key={s.index} class="card" aria-label={`Step ${s.index + 1}: ${s.agent}, ${s.status}`}>
                <div class="row">
                  <strong>{s.index + 1}. {s.agent}</strong>
                  <span class="badge" data-status={s.status}>{s.status}</span>
                  <span class="muted">{s.model}{s.tokens_used ? ` · ${s.tokens_used} tokens` : ''}{s.cost_usd ? ` · $${s.cost_usd.toFixed(6)}` : ''}{s.verdict ? ` · ${s.verdict}` : ''}</span>
                </div>
                {tools[s.index]?.length ? <ToolCalls step={s.index} entries={tools[s.index]!} /> : null}
                {(s.output || live[s.index]) && <pre tabIndex={0} aria-label={`Output of step ${s.index + 1}`}>{s.output || live[s.index]}</pre>}
              </li>
            ))}
          </ol>
          {run.result && (
            <>
              <h2>Result</h2>
              <p>{run.result.summary}</p>
              {(run.result as { changes?: Change[] }).changes?.length ? <Changes changes={(run.result as { changes: Change[] }).changes} /> : null}
              {run.result.files.length > 0 && <FileBrowser label="Run files" files={run.result.files} zipName={`codeloom-${run.id}.zip`} />}
            </>
          )}
        </>
      )}
    </>
  );
}

/** A run's ceilings in words (" · ceiling 5000 tokens, $0.50"), empty without any. */
function ceilingsText(limits: { max_tokens: number | null; max_cost_usd: number | null } | null | undefined): string {
  if (!limits) return '';
  const parts = [limits.max_tokens !== null ? `${limits.max_tokens} tokens` : '', limits.max_cost_usd !== null ? `$${limits.max_cost_usd}` : ''].filter(Boolean);
  return parts.length ? ` · ceiling ${parts.join(', ')}` : '';
}

/** An engineer's tool call as the run events tell it: the call, then (once it ends) its result. */
interface ToolEntry { call_id: string; step: number; name: string; arguments: unknown; result?: { ok: boolean; output: string; duration_ms: number } }
interface Change { path: string; status: 'added' | 'modified' | 'deleted'; diff: string }

/** What a call is about: its command, path or pattern. */
function subjectOf(args: unknown): string {
  const a = (args ?? {}) as Record<string, unknown>;
  const v = [a.command, a.path, a.pattern].find((x) => typeof x === 'string') as string | undefined;
  return v ? (v.length > 120 ? `${v.slice(0, 119)}…` : v) : '';
}

/** The engineer's tool calls as they happen: the command (or path), the exit status, the output folded. */
function ToolCalls({ step, entries }: { step: number; entries: ToolEntry[] }) {
  return (
    <ol class="tool-calls" aria-label={`Tool calls of step ${step + 1}`}>
      {entries.map((e) => {
        const exit = e.result ? /^\[(exit [^\]]*|killed[^\]]*)\]$/m.exec(e.result.output)?.[1] : undefined;
        const status = !e.result ? 'running…' : exit ?? (e.result.ok ? 'ok' : 'failed');
        return (
          <li key={e.call_id} data-testid="tool-call" data-ok={e.result ? String(e.result.ok) : 'pending'}>
            <details>
              <summary>
                <span class="muted">[{e.step}]</span> <code>{e.name}</code>{subjectOf(e.arguments) ? <> <code>{subjectOf(e.arguments)}</code></> : null} <span class="badge" data-status={!e.result ? 'running' : e.result.ok ? 'succeeded' : 'failed'}>{status}</span>
                {e.result ? <span class="muted"> {e.result.duration_ms} ms</span> : null}
              </summary>
              {e.result && <pre tabIndex={0} aria-label={`Output of ${e.name}`}>{e.result.output}</pre>}
            </details>
          </li>
        );
      })}
    </ol>
  );
}

/** The run's changes (an engineer run): each file's status, its unified diff folded. */
function Changes({ changes }: { changes: Change[] }) {
  return (
    <>
      <h3>Changes</h3>
      <ul class="changes" aria-label="Changes">
        {changes.map((c) => (
          <li key={c.path}>
            <details>
              <summary><span class="badge" data-status={c.status === 'deleted' ? 'failed' : 'succeeded'}>{c.status}</span> <code>{c.path}</code></summary>
              <pre tabIndex={0} aria-label={`Diff of ${c.path}`}>{c.diff}</pre>
            </details>
          </li>
        ))}
      </ul>
    </>
  );
}
