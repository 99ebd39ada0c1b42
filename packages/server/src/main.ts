#!/usr/bin/env node
import { loadConfig } from './config/load-config.js';
import { ConfigError, StartupError } from './errors.js';
import { buildApp } from './app.js';
import { listenSetting, reasonOf, startupFailureLine } from './startup-failure.js';

/** One line on stderr, no stack trace, and a non-zero exit (2: bad configuration, 1: anything else). */
function failToStart(error: unknown, code: number): never {
  process.stderr.write(`${startupFailureLine(error)}\n`);
  process.exit(code);
}

/** loadConfig → buildApp → listen; SIGTERM/SIGINT drain in-flight work and close storage. */
export async function serve(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) failToStart(error, 2);
    throw error;
  }
  let server;
  let address;
  try {
    server = await buildApp(config);
    address = await server.app.listen({ host: config.host, port: config.port })
      .catch((error: unknown) => { throw new StartupError(listenSetting(error), reasonOf(error)); });
  } catch (error) {
    failToStart(error, 1);
  }
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
  serve().catch((error) => failToStart(error, 1));
}
