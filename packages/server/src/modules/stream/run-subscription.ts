import type { StreamEvent } from '@codeloom/protocol';
import type { AppContext } from '../../context.js';
import type { Principal } from '../auth/principal.js';
import { followRun } from '../runs/run-follow.js';

/**
 * `{"type":"subscribe","run_id":…,"after":N}` on the channel: the run's kept
 * events after N (all without it), then live ones, each frame with its `seq`.
 * `onEnd` runs once the run's final frame was sent (the subscription is over).
 */
export async function subscribeToRun(ctx: AppContext, principal: Principal, runId: string, after: number | undefined, send: (frame: StreamEvent) => void, onEnd: () => void): Promise<() => void> {
  const follower = await followRun(ctx.runs, principal, runId, after ?? 0, send);
  // After the caller has recorded the subscription (a finished run ends at once).
  void follower.ended.then(() => setImmediate(onEnd));
  return follower.stop;
}
