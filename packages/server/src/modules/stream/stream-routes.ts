import type { FastifyPluginAsync } from 'fastify';
import websocket from '@fastify/websocket';
import type { AppContext } from '../../context.js';
import { ConnectionRegistry } from './connection-registry.js';
import { StreamConnection } from './stream-connection.js';
import { HARD_FRAME_LIMIT } from './stream-frames.js';

const HEARTBEAT_MS = 30_000;

/**
 * GET /api/v1/stream (and /v1/stream), upgraded to WebSocket. Registered at
 * the root with the full path so the plugin's shutdown hook (close every
 * stream with `shutting_down`, then 1001) covers all connections.
 */
export const streamRoutes = (ctx: AppContext, path: string): FastifyPluginAsync => async (app) => {
  const registry = new ConnectionRegistry(ctx.config.wsMaxConnectionsPerAccount);
  const heartbeat = setInterval(() => {
    for (const c of registry.connections()) c.heartbeat();
  }, HEARTBEAT_MS);
  heartbeat.unref();

  await app.register(websocket, {
    options: { maxPayload: HARD_FRAME_LIMIT, perMessageDeflate: false },
    preClose: async function preClose(this: typeof app) {
      clearInterval(heartbeat);
      await registry.shutdown();
      for (const client of this.websocketServer.clients) client.terminate();
    },
  });

  app.get(path, {
    websocket: true,
    schema: {
      tags: ['Streaming'],
      summary: 'Live generation over WebSocket (upgrade); see docs/streaming.md',
      description: 'Authenticate with the Authorization header on the upgrade, or with a first frame {"type":"auth","token":"…"} within 10 s (else close 4401). Frames are JSON text.',
    },
  }, (socket, request) => {
    new StreamConnection(socket, request, ctx, registry, {
      authTimeoutMs: ctx.config.wsAuthTimeout * 1000,
      maxConcurrentPerConnection: ctx.config.wsMaxConcurrentPerConnection,
    }).start();
  });
};
