import type { Migration, MigrationProvider } from 'kysely';
import * as m0001 from './0001-accounts.js';
import * as m0002 from './0002-generations.js';
import * as m0003 from './0003-projects.js';
import * as m0004 from './0004-agents-runs.js';
import * as m0005 from './0005-oauth.js';
import * as m0006 from './0006-usage-key-limits.js';
import * as m0007 from './0007-run-api-key.js';
import * as m0008 from './0008-cost.js';
import * as m0009 from './0009-budgets.js';
import * as m0010 from './0010-webhooks.js';
import * as m0011 from './0011-run-waiting.js';
import * as m0012 from './0012-request-logs.js';
import * as m0013 from './0013-responses.js';
import * as m0014 from './0014-deployments.js';
import * as m0015 from './0015-password-resets.js';
import * as m0016 from './0016-project-revisions.js';

/** Migrations live in code (not files found at run time) so the built server and the tests run the same list. */
export const migrationProvider: MigrationProvider = {
  async getMigrations(): Promise<Record<string, Migration>> {
    return { '0001-accounts': m0001, '0002-generations': m0002, '0003-projects': m0003, '0004-agents-runs': m0004, '0005-oauth': m0005, '0006-usage-key-limits': m0006, '0007-run-api-key': m0007, '0008-cost': m0008, '0009-budgets': m0009, '0010-webhooks': m0010, '0011-run-waiting': m0011, '0012-request-logs': m0012, '0013-responses': m0013, '0014-deployments': m0014, '0015-password-resets': m0015, '0016-project-revisions': m0016 };
  },
};
