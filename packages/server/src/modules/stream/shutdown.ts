import type { WebSocket } from 'ws';

/** How long a stopping server waits for a connection's generations to send their `shutting_down` frames. */
const SHUTDOWN_GRACE_MS = 2_000;

/**
 * Server stop, for one connection (whose `shuttingDown` is already set): every
 * running generation is aborted and ends with its `shutting_down` error frame,
 * then the socket closes with 1001.
 */
export async function closeForShutdown(ws: WebSocket, generations: Map<string, AbortController>): Promise<void> {
  const pending = [...generations.values()];
  for (const c of pending) c.abort();
  const deadline = Date.now() + SHUTDOWN_GRACE_MS;
  while (generations.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  if (ws.readyState === ws.OPEN) ws.close(1001, 'server shutting down');
}
