import type { WebSocket } from 'ws';

/** How often every open connection is pinged; one that has not answered the previous ping by then is cut off. */
export const HEARTBEAT_MS = 30_000;

/** A connection's liveness: a ping every HEARTBEAT_MS, terminated when the previous one got no pong. */
export class Heartbeat {
  private alive = true;

  constructor(private readonly ws: WebSocket) {}

  /** Listens for the client's pongs. */
  listen(): void {
    this.ws.on('pong', () => { this.alive = true; });
  }

  beat(): void {
    if (!this.alive) { this.ws.terminate(); return; }
    this.alive = false;
    if (this.ws.readyState === this.ws.OPEN) this.ws.ping();
  }
}

/** Beats every connection `connections()` lists, every HEARTBEAT_MS, without keeping the process alive; returns the stop function. */
export function startHeartbeats(connections: () => Iterable<{ heartbeat(): void }>): () => void {
  const timer = setInterval(() => {
    for (const c of connections()) c.heartbeat();
  }, HEARTBEAT_MS);
  timer.unref();
  return () => clearInterval(timer);
}
