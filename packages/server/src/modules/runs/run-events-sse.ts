import type { FastifyReply, FastifyRequest } from 'fastify';
import { openEventStream } from '../../plugins/sse-streams.js';
import type { RunsService } from './runs-service.js';
import { followRun } from './run-follow.js';
import type { RunFrame } from './run-events.js';

const KEEP_ALIVE_MS = 15_000;

/**
 * `GET /runs/{id}/events`: the run's events as text/event-stream, each with
 * `id: <seq>`, replayed after `Last-Event-ID` (or `?after=`), then live; the
 * stream ends after the run's final event; a request after the final event (an EventSource reconnecting)
 * gets 204 No Content, which makes an EventSource stop. Another account's run is a 404
 * problem document (nothing is streamed).
 */
export async function sendRunEvents(runs: RunsService, request: FastifyRequest, reply: FastifyReply, runId: string, after: number): Promise<void> {
  const principal = request.principal!;
  await runs.ownedRow(principal, runId);
  const raw = reply.raw;
  const pending: RunFrame[] = [];
  let open = false;
  const write = (frame: RunFrame) => {
    if (!open) return void pending.push(frame);
    if (!raw.destroyed) raw.write(`id: ${frame.seq}\nevent: ${frame.event}\ndata: ${JSON.stringify(frame)}\n\n`);
  };
  const follower = await followRun(runs, principal, runId, after, write);
  if (follower.done && pending.length === 0) {
    // The client has had the run's final event (a reconnect after it): 204 tells an EventSource to stop reconnecting.
    return void reply.code(204).send();
  }
  openEventStream(reply);
  raw.flushHeaders(); // a queued run may say nothing for a while; the client learns at once that the stream is open
  open = true;
  for (const frame of pending.splice(0)) write(frame);
  const forget = request.server.sseStreams.add({ kind: 'run', raw, id: runId, stop: follower.stop });
  const keepAlive = setInterval(() => { if (!raw.destroyed) raw.write(': keep-alive\n\n'); }, KEEP_ALIVE_MS);
  const closed = new Promise<void>((resolve) => raw.once('close', () => resolve()));
  await Promise.race([follower.ended, closed]);
  clearInterval(keepAlive);
  follower.stop();
  forget();
  if (!raw.destroyed && !raw.writableEnded) raw.end();
}

/** The position to resume after: `Last-Event-ID` wins over `?after=`; none is 0 (everything). */
export function resumePoint(lastEventId: string | undefined, after: number | undefined): number {
  if (lastEventId !== undefined && /^\d{1,15}$/.test(lastEventId.trim())) return Number(lastEventId.trim());
  return after ?? 0;
}
