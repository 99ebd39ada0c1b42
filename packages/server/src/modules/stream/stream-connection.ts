import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { Channel } from './channel.js';
import { ConnectionAuth } from './connection-auth.js';
import type { ConnectionRegistry } from './connection-registry.js';
import { dispatchFrame } from './frame-dispatcher.js';
import { FrameRateLimiter } from './frame-rate-limiter.js';
import { Heartbeat } from './heartbeat.js';
import { FrameSender } from './send-queue.js';
import { closeForShutdown } from './shutdown.js';
import type { ChannelDeps, ChannelSettings } from './stream-deps.js';

/**
 * One WebSocket client. Holds the connection's state and wires its socket:
 * client frames, past the frame rate limit, go to the dispatcher (one handler
 * per frame type, frames/); the credential, heartbeat, backpressure and
 * shutdown each live in their own file.
 */
export class StreamConnection implements Channel {
  readonly id = `con_${randomBytes(9).toString('base64url')}`;
  readonly auth: ConnectionAuth;
  readonly out: FrameSender;
  readonly generations = new Map<string, AbortController>();
  readonly subscriptions = new Map<string, () => void>();
  readonly log: FastifyBaseLogger;
  private readonly pulse: Heartbeat;
  shuttingDown = false;
  private nextId = 0;

  constructor(
    readonly ws: WebSocket,
    request: FastifyRequest,
    readonly deps: ChannelDeps,
    private readonly registry: ConnectionRegistry,
    readonly settings: ChannelSettings,
  ) {
    this.log = request.log;
    this.out = new FrameSender(ws);
    this.pulse = new Heartbeat(ws);
    this.auth = new ConnectionAuth({
      connectionId: this.id, ws, request, out: this.out, registry, deps, timeoutMs: settings.authTimeoutMs,
      onLost: () => this.cleanup(),
    });
  }

  start(): void {
    this.registry.add(this);
    const frames = new FrameRateLimiter(this.ws, this.settings.frameLimits);
    this.ws.on('message', (data, isBinary) => { if (frames.admit(data as Buffer)) void dispatchFrame(this, data as Buffer, isBinary); });
    this.ws.on('close', () => this.cleanup());
    this.pulse.listen();
    this.ws.on('error', () => this.cleanup());
    this.auth.begin();
  }

  nextRequestId(): string {
    return `r_${this.id.slice(4, 10)}_${++this.nextId}`;
  }

  heartbeat(): void {
    this.pulse.beat();
  }

  /** Server stop: every running generation ends with `shutting_down`, then the socket closes with 1001. */
  async shutdown(): Promise<void> {
    this.shuttingDown = true;
    await closeForShutdown(this.ws, this.generations);
  }

  private cleanup(): void {
    this.auth.stop();
    for (const c of this.generations.values()) c.abort();
    for (const unsubscribe of this.subscriptions.values()) unsubscribe();
    this.subscriptions.clear();
    this.auth.releaseSlot();
    this.registry.delete(this);
  }
}
