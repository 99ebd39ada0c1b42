import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ServerResponse } from 'node:http';
import { ERROR_CODES } from '@codeloom/protocol';

declare module 'fastify' {
  interface FastifyInstance {
    /** Open text/event-stream responses of this server, ended with `shutting_down` on stop. */
    sseStreams: SseStreams;
  }
}

export type SseKind = 'generate' | 'run';

interface OpenStream {
  kind: SseKind;
  raw: ServerResponse;
  /** The `id` of the error frame (the request id, or the run id). */
  id: string;
  /** Stops the work behind the stream (the model call, the run follower). */
  stop: () => void;
}

/**
 * Every open SSE stream, so a stopping server can end each one with an
 * `error` event (code `shutting_down`) before its socket closes, instead of
 * cutting it without a word.
 */
export class SseStreams {
  private readonly open = new Set<OpenStream>();

  add(stream: OpenStream): () => void {
    this.open.add(stream);
    return () => this.open.delete(stream);
  }

  get size(): number {
    return this.open.size;
  }

  /**
   * Ends the open streams (of one kind, or all) with an `error` event
   * `shutting_down`; resolves once those responses are flushed (at most a second).
   */
  shutdown(kind?: SseKind): Promise<void> {
    const data = { status: ERROR_CODES.shutting_down.status, code: 'shutting_down', message: 'The server is shutting down; reconnect and retry.' };
    const flushed: Array<Promise<void>> = [];
    for (const s of [...this.open]) {
      if (kind && s.kind !== kind) continue;
      this.open.delete(s);
      s.stop();
      if (s.raw.destroyed || s.raw.writableEnded) continue;
      flushed.push(new Promise((resolve) => { s.raw.once('finish', resolve); s.raw.once('close', resolve); }));
      s.raw.write(`event: error\ndata: ${JSON.stringify({ event: 'error', id: s.id, data })}\n\n`);
      s.raw.end();
    }
    if (!flushed.length) return Promise.resolve();
    return Promise.race([Promise.all(flushed).then(() => {}), new Promise<void>((r) => setTimeout(r, 1_000).unref())]);
  }
}

export function registerSseStreams(app: FastifyInstance): SseStreams {
  const streams = new SseStreams();
  app.decorate('sseStreams', streams);
  return streams;
}

/** Takes the response over from Fastify and writes the head of a text/event-stream (with the headers hooks have set). */
export function openEventStream(reply: FastifyReply, headers: Record<string, string> = {}): ServerResponse {
  const raw = reply.raw;
  reply.hijack();
  raw.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    'x-accel-buffering': 'no',
    ...headers,
  });
  return raw;
}
