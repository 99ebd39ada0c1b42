import type { Principal } from '../auth/principal.js';
import { outcomeEventOf } from './run-ending.js';
import { isTerminalFrame, type RunFrame } from './run-events.js';
import { fromRow, isFinished } from './run-record.js';
import type { RunsService } from './runs-service.js';

export interface RunFollower {
  /** Stops delivering (the client left). */
  stop(): void;
  /** Resolves once the run's last frame (`complete` or `error`) was delivered. */
  ended: Promise<void>;
}

/**
 * Follows one run for a client: first the kept events after `after` (all of
 * them without it), then live ones, each exactly once and in `seq` order.
 * Listening starts before the kept events are read; a live frame already
 * replayed is dropped by its `seq`. Ends after the run's final frame. A
 * finished run whose events are no longer kept answers with its outcome.
 * Another account's run (or none) is a 404 before anything is sent.
 */
export async function followRun(runs: RunsService, principal: Principal, runId: string, after: number, deliver: (frame: RunFrame) => void): Promise<RunFollower> {
  await runs.ownedRow(principal, runId);
  let last = after;
  let replaying = true;
  let done = false;
  const buffered: RunFrame[] = [];
  let resolveEnded!: () => void;
  const ended = new Promise<void>((r) => { resolveEnded = r; });
  const emit = (frame: RunFrame) => {
    if (done || frame.seq <= last) return;
    last = frame.seq;
    deliver(frame);
    if (isTerminalFrame(frame)) finish();
  };
  const unlisten = runs.events.listen(runId, (frame) => (replaying ? buffered.push(frame) : emit(frame)));
  const finish = () => {
    done = true;
    unlisten();
    resolveEnded();
  };
  try {
    const row = await runs.ownedRow(principal, runId);
    const kept = await runs.events.read(runId, 0);
    for (const frame of kept) emit(frame);
    replaying = false;
    for (const frame of buffered.splice(0)) emit(frame);
    if (!done && isFinished(row.status as never)) {
      // The client already has the final frame: nothing more will come.
      if (kept.some(isTerminalFrame)) finish();
      // Finished, yet no final frame kept (the log expired, or was lost with a restarted single instance).
      else emit({ ...outcomeEventOf(fromRow(row)), id: runId, seq: last + 1 } as RunFrame);
    }
  } catch (error) {
    finish();
    throw error;
  }
  return { stop: () => { if (!done) finish(); }, ended };
}
