import type { FastifyPluginAsync } from 'fastify';
import websocket from '@fastify/websocket';
import type { Config } from '../../config/load-config.js';
import { ConnectionRegistry } from './connection-registry.js';
import { StreamConnection } from './stream-connection.js';
import { HARD_FRAME_LIMIT } from './stream-frames.js';
import { startHeartbeats } from './heartbeat.js';
import type { ChannelDeps } from './stream-deps.js';
import { AppError } from '../../errors.js';
import { errorResponses } from '../../plugins/openapi.js';
import { writeRawProblem } from '../../plugins/protocol-errors.js';
import type { Duplex } from 'node:stream';

export interface StreamRoutesDeps extends ChannelDeps {
  config: Pick<Config, 'wsMaxConnectionsPerAccount' | 'wsAuthTimeout' | 'wsMaxConcurrentPerConnection' | 'wsFramesPerSecond' | 'wsFrameBurst' | 'wsFrameRefusalsBeforeClose'>;
}

/**
 * GET /api/v1/stream (and /v1/stream), upgraded to WebSocket. Registered at
 * the root with the full path so the plugin's shutdown hook (close every
 * stream with `shutting_down`, then 1001) covers all connections.
 */
export const streamRoutes = ({ config, ...deps }: StreamRoutesDeps, path: string): FastifyPluginAsync => async (app) => {
  const registry = new ConnectionRegistry(config.wsMaxConnectionsPerAccount);
  const stopHeartbeats = startHeartbeats(() => registry.connections());

  await app.register(websocket, {
    options: { maxPayload: HARD_FRAME_LIMIT, perMessageDeflate: false },
    preClose: async function preClose(this: typeof app) {
      stopHeartbeats();
      await registry.shutdown();
      for (const client of this.websocketServer.clients) client.terminate();
    },
  });

  // A broken handshake (no Sec-WebSocket-Key, a bad version, …) is answered with a problem document, not ws's text/html.
  app.websocketServer.on('wsClientError', (error: Error, socket: Duplex) => writeRawProblem(socket, 'validation_failed', `Not a valid WebSocket upgrade: ${error.message}.`));

  // `handler` answers plain HTTP (with a problem document), `wsHandler` the upgrade; declared this way the route stays in the OpenAPI document.
  app.route({
    method: 'GET',
    url: path,
    schema: {
      tags: ['Streaming'],
      summary: 'Live generation over WebSocket (upgrade); see docs/streaming.md',
      description: 'Connect with `Upgrade: websocket`. Authenticate with the Authorization header on the upgrade, or with a first frame {"type":"auth","token":"…"} within 10 s (else close 4401). Frames are JSON text; see docs/streaming.md for every frame.',
      response: { 101: { description: 'Switching Protocols: the WebSocket channel', type: 'null' }, ...errorResponses(426, 429) },
    },
    // RFC 9110 §15.5.22: a 426 names the protocol to switch to in Upgrade.
    handler: async () => { throw new AppError('upgrade_required', undefined, { headers: { upgrade: 'websocket' } }); },
    wsHandler: (socket, request) => {
      new StreamConnection(socket, request, deps, registry, {
        authTimeoutMs: config.wsAuthTimeout * 1000,
        maxConcurrentPerConnection: config.wsMaxConcurrentPerConnection,
        frameLimits: { perSecond: config.wsFramesPerSecond, burst: config.wsFrameBurst, refusalsBeforeClose: config.wsFrameRefusalsBeforeClose },
      }).start();
    },
  });
};
