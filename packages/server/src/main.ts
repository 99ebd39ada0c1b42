#!/usr/bin/env node
import { ConfigError, loadConfig } from './config/load-config.js';
import { buildApp } from './app.js';

/** loadConfig → buildApp → listen; SIGTERM/SIGINT drain in-flight work and close storage. */
export async function serve(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const server = await buildApp(config);
  const address = await server.app.listen({ host: config.host, port: config.port });
  server.app.log.info(`Codeloom listening on ${address}`);
  process.stdout.write(`Codeloom listening on ${address} (storage: ${server.ctx.store.handle.dialect}${server.ctx.redis ? ', redis' : ''})\n`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    server.app.log.info({ signal }, 'draining');
    const force = setTimeout(() => {
      server.app.log.error('drain timed out; exiting');
      // Open SSE streams get `shutting_down`, runs still executing here are written `interrupted`, then exit.
      const exit = setTimeout(() => process.exit(1), 3_000);
      void server.abandon().finally(() => { clearTimeout(exit); setImmediate(() => process.exit(1)); });
    }, config.shutdownTimeout * 1000);
    force.unref();
    server.close().then(() => process.exit(0), (error) => {
      server.app.log.error({ err: error }, 'error while closing');
      process.exit(1);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  serve().catch((error) => {
    process.stderr.write(`Codeloom failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
