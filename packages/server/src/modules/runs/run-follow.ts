import type { Principal } from '../../identity/principal.js';
import { outcomeEventOf } from './run-ending.js';
import { isTerminalFrame, type RunFrame } from './run-events.js';
import { fromRow, isFinished } from './run-record.js';
import type { RunsService } from './runs-service.js';

export interface RunFollower {
  /** Stops delivering (the client left). */
  stop(): void;
  /** Resolves once the run's last frame (`complete` or `error`) was delivered. */
  ended: Promise<void>;
  /** Whether the run's last frame has been delivered (or the client already had it: nothing more will come). */
  readonly done: boolean;
}

/**
 * Follows one run for a client: first the kept events after `after` (all of
 * them without it), then live ones, each exactly once and in `seq` order.
 * Listening starts before the kept events are read; a live frame already
 * replayed is dropped by its `seq`, and a live frame that skips numbers (a
 * message lost while the instance's Redis subscriber reconnected) makes it
 * read the missing ones from the log first. Ends after the run's final
 * frame. A finished run whose events are no longer kept answers with its
 * outcome. Another account's run (or none) is a 404 before anything is sent.
 */
export async function followRun(runs: RunsService, principal: Principal, runId: string, after: number, deliver: (frame: RunFrame) => void): Promise<RunFollower> {
  await runs.ownedRow(principal, runId);
  let last = after;
  let done = false;
  let catching = true;
  const buffered: RunFrame[] = [];
  let resolveEnded!: () => void;
  const ended = new Promise<void>((r) => { resolveEnded = r; });
  const finish = () => {
    if (done) return;
    done = true;
    unlisten();
    resolveEnded();
  };
  const emit = (frame: RunFrame) => {
    if (done || frame.seq <= last) return;
    last = frame.seq;
    deliver(frame);
    if (isTerminalFrame(frame)) finish();
  };
  const flush = () => {
    catching = false;
    for (const frame of buffered.splice(0).sort((x, y) => x.seq - y.seq)) emit(frame);
  };
  const catchUp = async () => {
    catching = true;
    try {
      for (const frame of await runs.events.read(runId, last)) emit(frame);
    } catch { /* the live frames that came meanwhile still go out */ }
    flush();
  };
  const unlisten = runs.events.listen(runId, (frame) => {
    if (done) return;
    if (catching || frame.seq > last + 1) {
      buffered.push(frame);
      if (!catching) void catchUp();
      return;
    }
    emit(frame);
  });
  try {
    const row = await runs.ownedRow(principal, runId);
    const kept = await runs.events.read(runId, 0);
    for (const frame of kept) emit(frame);
    flush();
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
  return { stop: finish, ended, get done() { return done; } };
}
