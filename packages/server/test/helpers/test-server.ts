import { randomBytes } from 'node:crypto';
import { buildApp, type CodeloomApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/load-config.js';

export interface TestServer {
  url: string;
  server: CodeloomApp;
  close(): Promise<void>;
}

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL;

/** A unique, valid PostgreSQL schema / Redis prefix per test server, so suites can share one server. */
export const uniqueName = (prefix: string) => `${prefix}_${randomBytes(6).toString('hex')}`;

/**
 * A real Codeloom server on a loopback port. SQLite in memory by default;
 * `dialect: 'postgres'` uses TEST_DATABASE_URL in a schema of its own.
 */
export async function startTestServer(options: { dialect?: 'sqlite' | 'postgres'; redis?: boolean; env?: Record<string, string>; pgSchema?: string; redisPrefix?: string } = {}): Promise<TestServer> {
  const env: Record<string, string> = {
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    CODELOOM_ARGON2_MEMORY_KIB: '1024',
    CODELOOM_TRUST_PROXY: 'true',
    CODELOOM_ISSUER: 'http://codeloom.test',
    ...(options.dialect === 'postgres' ? { DATABASE_URL: TEST_DATABASE_URL! } : {}),
    ...(options.redis ? { REDIS_URL: TEST_REDIS_URL! } : {}),
    ...options.env,
  };
  const config = loadConfig(env);
  const pgSchema = options.dialect === 'postgres' ? options.pgSchema ?? uniqueName('t') : undefined;
  const server = await buildApp(config, {
    database: pgSchema ? { pgSchema } : { sqliteFile: ':memory:' },
    redisPrefix: options.redisPrefix ?? `${uniqueName('test')}:`,
  });
  const address = await server.app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url: address,
    server,
    async close() {
      await server.close();
      // A schema made for this server only is dropped with it (a caller-named one is the caller's).
      if (pgSchema && !options.pgSchema) {
        const pg = (await import('pg')).default;
        const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await client.connect();
        try { await client.query(`DROP SCHEMA IF EXISTS "${pgSchema}" CASCADE`); } finally { await client.end(); }
      }
    },
  };
}

let ipCounter = 1;
/** A fresh client address per test user (the server trusts X-Forwarded-For in tests), so per-address limits stay out of the way. */
export const nextIp = () => `10.${(ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter++ & 255}`;
