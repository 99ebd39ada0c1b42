import type { WebhookEvents } from '../webhooks/webhook-events.js';
import { isFinished, toRun, type RunState } from './run-record.js';

/**
 * Told once per run, when it finishes (succeeded, failed or cancelled), by whichever path ended it: the
 * executor, a cancel of a queued run, an interrupted run. Each path ends the run with a guarded write, and only
 * the one whose write took calls this.
 */
export type RunFinished = (run: RunState) => void;

export const NO_RUN_FINISHED: RunFinished = () => {};

/** The organization's webhooks hear `run.succeeded`, `run.failed` or `run.cancelled`, with the run as GET /api/v1/runs/{id} returns it. */
export const runWebhooks = (webhooks: WebhookEvents): RunFinished => (run) => {
  if (isFinished(run.status)) webhooks.emit(run.userId, `run.${run.status as 'succeeded' | 'failed' | 'cancelled'}`, toRun(run) as unknown as Record<string, unknown>);
};
