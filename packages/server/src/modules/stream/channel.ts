import type { FastifyBaseLogger } from 'fastify';
import type { WebSocket } from 'ws';
import type { ConnectionAuth } from './connection-auth.js';
import type { FrameSender } from './send-queue.js';
import type { ChannelDeps, ChannelSettings } from './stream-deps.js';
import type { FrameErrors } from './stream-frames.js';

/** One open connection as the frame handlers see it (implemented by StreamConnection). */
export interface Channel {
  readonly id: string;
  readonly ws: WebSocket;
  readonly log: FastifyBaseLogger;
  readonly deps: ChannelDeps;
  readonly settings: ChannelSettings;
  readonly auth: ConnectionAuth;
  readonly out: FrameSender;
  /** Running generations by request id; aborting one ends it with its `cancelled` (or `shutting_down`) frame. */
  readonly generations: Map<string, AbortController>;
  /** Followed runs by run id: the function stops following. */
  readonly subscriptions: Map<string, () => void>;
  /** Set once the server is stopping: no new generation starts. */
  readonly shuttingDown: boolean;
  /** An id for a generate frame that brought none. */
  nextRequestId(): string;
}

/**
 * One client frame type: how its frame is checked, whether it needs an
 * authenticated connection, and what it does. The dispatcher has already
 * parsed the frame, found its type, and answered what is wrong with it.
 */
export interface FrameHandler<F = Record<string, unknown>> {
  readonly type: string;
  /** The frame's schema errors, null when it is valid; without it every frame of the type is accepted. */
  readonly check?: (frame: unknown) => FrameErrors | null;
  /** true: refused with `unauthorized` until the connection has authenticated. */
  readonly needsAuth: boolean;
  handle(channel: Channel, frame: F): void | Promise<void>;
}
