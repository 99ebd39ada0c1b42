import { Type } from '@sinclair/typebox';
import { SingleLine } from '@codeloom/protocol';
import { followRun } from '../../runs/run-follow.js';
import { toErrorData } from '../channel-errors.js';
import { frameHandler } from '../stream-frames.js';

/**
 * `{"type":"subscribe","run_id":…,"after":N}`: the run's kept events after N
 * (all without it), then live ones, each frame with its `seq`, until the
 * run's final frame. Subscribing again to a followed run does nothing.
 */
export const subscribe = frameHandler(
  Type.Object({ type: Type.Literal('subscribe'), run_id: SingleLine({ minLength: 1, maxLength: 64 }), after: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })) }),
  true,
  async (channel, { run_id: runId, after }) => {
    if (channel.subscriptions.has(runId)) return;
    try {
      await channel.auth.live.verify();
      const follower = await followRun(channel.deps.runs, channel.auth.principal!, runId, after ?? 0, (event) => channel.out.sendNow(event));
      // After the subscription is recorded below (a finished run ends at once).
      void follower.ended.then(() => setImmediate(() => channel.subscriptions.delete(runId)));
      if (channel.ws.readyState !== channel.ws.OPEN) return follower.stop();
      channel.subscriptions.set(runId, follower.stop);
    } catch (error) {
      channel.out.sendNow({ event: 'error', id: runId, data: toErrorData(error) });
    }
  },
);
