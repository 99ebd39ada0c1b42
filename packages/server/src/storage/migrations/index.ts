import type { Migration, MigrationProvider } from 'kysely';
import * as m0001 from './0001-accounts.js';

/** Migrations live in code (not files found at run time) so the built server and the tests run the same list. */
export const migrationProvider: MigrationProvider = {
  async getMigrations(): Promise<Record<string, Migration>> {
    return { '0001-accounts': m0001 };
  },
};
