import type { FastifyBaseLogger } from 'fastify';
import type { WebSocket } from 'ws';
import type { ConnectionAuth } from './connection-auth.js';
import type { FrameSender } from './send-queue.js';
import type { ChannelDeps, ChannelSettings } from './stream-deps.js';

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

