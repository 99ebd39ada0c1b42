import { ERROR_CODES, isErrorCode, type StreamEvent } from '@codeloom/protocol';
import { nowIso } from '../../storage/ids.js';
import type { RunsTable } from '../../storage/database.js';
import type { Store } from '../../storage/store.js';
import { fromRow, isFinished, toRow, toRun, type RunState } from './run-record.js';

const MESSAGES = {
  cancelled: { step: 'The run was cancelled.', run: 'The run was cancelled.', queued: 'The run was cancelled before it started.' },
  interrupted: { step: 'The server stopped during this step.', run: 'The server stopped while this run was in progress.', queued: 'The server stopped before this run started.' },
} as const;

/**
 * Ends a run badly, in place: the step in progress fails with `stepError` (by default the run's own
 * `error`), pending steps are skipped, finished steps kept; the run takes `status` and `error`, which
 * names the step that failed.
 */
export function failRun(run: RunState, status: 'failed' | 'cancelled', error: { code: string; message: string }, stepError = error): void {
  const failedAt = run.steps.find((s) => s.status === 'running');
  for (const s of run.steps) {
    if (s.status === 'running') Object.assign(s, { status: 'failed', finished_at: nowIso(), error: stepError });
    else if (s.status === 'pending') s.status = 'skipped';
  }
  Object.assign(run, { status, finished_at: nowIso(), waiting: null, error: { ...error, ...(failedAt ? { step: failedAt.index } : {}) } });
}

/** The run as ended from outside its executor: the step in progress failed with `code`, pending steps skipped, finished steps kept. */
export function endedFromRow(row: RunsTable, code: 'cancelled' | 'interrupted'): RunState {
  const run = fromRow(row);
  const message = run.status === 'queued' ? MESSAGES[code].queued : MESSAGES[code].run;
  failRun(run, code === 'cancelled' ? 'cancelled' : 'failed', { code, message }, { code, message: MESSAGES[code].step });
  return run;
}

/** The `status` of a run's `error` event, from its error code; the same whether the event is live or answers a late subscribe. */
export function runErrorStatus(code: string): number {
  if (code === 'interrupted') return 503;
  return isErrorCode(code) ? ERROR_CODES[code].status : 500;
}

/** The `error` event announcing a run that ended badly. */
export function errorEventOf(run: RunState): StreamEvent {
  const code = run.error?.code ?? run.status;
  return { event: 'error', id: run.id, data: { status: runErrorStatus(code), code, message: run.error?.message ?? `The run ${run.status}.`, run: toRun(run) } };
}

/** The event a finished run ended with (`complete` or `error`). */
export function outcomeEventOf(run: RunState): StreamEvent {
  return run.status === 'succeeded' ? { event: 'complete', id: run.id, data: toRun(run) } : errorEventOf(run);
}

/**
 * Ends a run that is not finished, from any instance, with a compare-and-set
 * on what was read: a concurrent step change makes it read again; a run that
 * finished meanwhile is left as it is. Returns the ended run, or null when
 * the run had already finished (its stored state then wins).
 * `onlyIf` limits which statuses may be ended (an interrupted run must have been `running`).
 */
export async function endRun(store: Store, row: RunsTable, code: 'cancelled' | 'interrupted', onlyIf: readonly string[] = ['queued', 'running']): Promise<RunState | null> {
  let current: RunsTable | undefined = row;
  for (let attempt = 0; attempt < 50 && current; attempt++) {
    if (isFinished(current.status as never) || !onlyIf.includes(current.status)) return null;
    const ended = endedFromRow(current, code);
    if (await store.runs.saveIfUnchanged(toRow(ended), current)) return ended;
    current = await store.runs.getById(current.id);
  }
  return null;
}
