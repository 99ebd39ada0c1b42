import { once } from 'node:events';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { openEventStream } from '../../plugins/sse-streams.js';
import type { StreamEvent } from '@codeloom/protocol';
import { AppError, CancelledError } from '../../errors.js';
import { asDependencyError } from '../../storage/dependency-errors.js';
import { ERROR_CODES } from '@codeloom/protocol';

/**
 * Server-Sent Events for `"stream": true`. Frames are the WebSocket channel's
 * frames, as JSON in `data:` under the same `event:` name. A write the client
 * cannot take yet holds the model back (we stop pulling until 'drain'), and a
 * client that leaves aborts the upstream call.
 */
export async function sendAsSse(
  request: FastifyRequest,
  reply: FastifyReply,
  work: (io: { signal: AbortSignal; onToken: (text: string) => Promise<void> | void; onEvent: (e: { event: string; data: unknown }) => Promise<void> }) => Promise<unknown>,
  /** `Server-Timing` once the work is done, sent as an HTTP trailer (announced in the head). */
  timing?: () => string,
): Promise<void> {
  const raw = reply.raw;
  const id = request.id;
  const abort = new AbortController();
  openEventStream(reply, timing ? { trailer: 'Server-Timing' } : {});
  raw.on('close', () => { if (!raw.writableFinished) abort.abort(); });
  // A server whose drain times out ends this stream with `shutting_down` (plugins/sse-streams.ts).
  const forget = request.server.sseStreams.add({ kind: 'generate', raw, id, stop: () => abort.abort() });

  // Frames written in one turn (tokens that arrived together) leave in one socket write: corked until the turn's end.
  let corked = false;
  const uncork = () => { corked = false; raw.uncork(); };
  // A promise only when the client is behind: the model call awaits a returned hold-back, nothing otherwise.
  const write = (frame: StreamEvent): Promise<void> | undefined => {
    if (raw.destroyed || raw.writableEnded) return undefined;
    if (!corked) {
      corked = true;
      raw.cork();
      process.nextTick(uncork);
    }
    if (raw.write(`event: ${frame.event}\ndata: ${JSON.stringify(frame)}\n\n`)) return undefined;
    return Promise.race([once(raw, 'drain'), once(raw, 'close')]).then(() => undefined);
  };

  try {
    const result = await work({ signal: abort.signal, onToken: (text) => write({ event: 'token', id, data: text }), onEvent: async (e) => { await write({ event: e.event, id, data: e.data }); } });
    await write({ event: 'complete', id, data: result });
  } catch (error) {
    if (error instanceof CancelledError && abort.signal.aborted) {
      request.log.info({ reqId: id }, 'client left a streamed generation; upstream aborted');
    } else {
      const problem = error instanceof AppError ? error : asDependencyError(error) ?? new AppError('internal_error');
      if (!(error instanceof AppError) && !asDependencyError(error)) request.log.error({ err: error }, 'streamed generation failed');
      await write({ event: 'error', id, data: { status: ERROR_CODES[problem.code].status, code: problem.code, message: problem.message } });
    }
  } finally {
    forget();
    if (!raw.destroyed && !raw.writableEnded) {
      if (timing) raw.addTrailers({ 'server-timing': timing() });
      raw.end();
    }
  }
}
