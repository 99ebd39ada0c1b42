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

/**
 * Fastify's listen() logs "Server listening at …" once per address (every interface for 0.0.0.0);
 * the plain line below says it once, so that record is left out of the log.
 */
async function listenQuietly(app: Awaited<ReturnType<typeof buildApp>>['app'], host: string, port: number): Promise<string> {
  const log = app.log as { level?: string };
  const level = log.level;
  const quiet = level === 'info' || level === 'debug' || level === 'trace';
  if (quiet) log.level = 'warn';
  try {
    return await app.listen({ host, port });
  } finally {
    if (quiet) log.level = level;
  }
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
    address = await listenQuietly(server.app, config.host, config.port)
      .catch((error: unknown) => { throw new StartupError(listenSetting(error), reasonOf(error)); });
  } catch (error) {
    failToStart(error, 1);
  }
  // The one "listening" line, whatever LOG_LEVEL says (scripts and probes wait for it).
  // Bound to every interface (HOST=0.0.0.0 or ::, as in the container image), the URL is one way in; the line says the rest.
  const everywhere = config.host === '0.0.0.0' || config.host === '::' ? `, all interfaces (${config.host === '::' ? '[::]' : '0.0.0.0'}:${new URL(address).port})` : '';
  process.stdout.write(`Codeloom listening on ${address} (storage: ${server.ctx.store.handle.dialect}${server.ctx.redis ? ', redis' : ''}${everywhere})\n`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    server.app.log.info({ signal }, 'draining');
    const force = setTimeout(() => {
      server.app.log.error('drain timed out; exiting');
      process.stderr.write(`Codeloom stopped: the drain took longer than CODELOOM_SHUTDOWN_TIMEOUT (${config.shutdownTimeout} s)\n`);
      // Open SSE streams get `shutting_down`, runs still executing here are written `interrupted`, then exit.
      const exit = setTimeout(() => process.exit(1), 3_000);
      void server.abandon().finally(() => { clearTimeout(exit); setImmediate(() => process.exit(1)); });
    }, config.shutdownTimeout * 1000);
    force.unref();
    server.close().then(() => {
      process.stdout.write('Codeloom stopped\n');
      process.exit(0);
    }, (error) => {
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
