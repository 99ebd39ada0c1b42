import { createPgSchema, dropPgSchema } from './pg-schema.js';
import { spawnServer, type SpawnedServer } from './spawn-server.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL, uniqueName } from './test-server.js';

/** Server processes sharing one private PostgreSQL schema and the test Redis: one service, several instances. */
export interface Cluster {
  /** The environment every instance was started with (start more with `spawnServer(cluster.env)`). */
  env: Record<string, string>;
  servers: SpawnedServer[];
  stop(): Promise<void>;
}

export const clusterEnabled = Boolean(TEST_DATABASE_URL && TEST_REDIS_URL);

export async function startCluster(name: string, options: { count?: number; env?: Record<string, string> } = {}): Promise<Cluster> {
  const schema = uniqueName(name);
  await createPgSchema(schema);
  const env = { DATABASE_URL: TEST_DATABASE_URL!, CODELOOM_DATABASE_SCHEMA: schema, REDIS_URL: TEST_REDIS_URL!, ...options.env };
  const servers = await Promise.all(Array.from({ length: options.count ?? 2 }, () => spawnServer(env)));
  return {
    env,
    servers,
    stop: async () => {
      await Promise.all(servers.map((s) => s.stop()));
      await dropPgSchema(schema);
    },
  };
}
