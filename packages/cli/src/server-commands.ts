import { PLAN_NAMES, isPlanName } from '@codeloom/protocol';
import { ConfigError, createStore, emailLookupKeys, loadConfig, migrateToLatest, openDatabase, serve } from '@codeloom/server';
import { listUsers } from './commands/list-users.js';

export class UsageError extends Error {}

interface Flags { json: boolean; page?: string | undefined; limit?: string | undefined }

function print(flags: Flags, data: unknown, text: string) {
  process.stdout.write(flags.json ? `${JSON.stringify(data)}\n` : `${text}\n`);
}

/** Commands that act on the server's own storage, with the server's own settings. */
export async function runServerCommand(args: string[], flags: Flags): Promise<number> {
  const [command, sub, ...rest] = args;
  if (command === 'serve') {
    await serve();
    return 0;
  }
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) { process.stderr.write(`${error.message}\n`); return 2; }
    throw error;
  }
  const handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, ...(config.databaseSchema ? { pgSchema: config.databaseSchema } : {}) });
  try {
    const applied = await migrateToLatest(handle);
    const store = createStore(handle);
    if (command === 'migrate') {
      print(flags, { applied, dialect: handle.dialect }, applied.length ? `Applied ${applied.join(', ')} (${handle.dialect}).` : `Database is up to date (${handle.dialect}).`);
      return 0;
    }
    if (command === 'admin' && sub === 'set-plan') {
      const [email, plan] = rest;
      if (!email || !plan) return usage('codeloom admin set-plan EMAIL PLAN');
      if (!isPlanName(plan)) return usage(`PLAN must be one of ${PLAN_NAMES.join(', ')}`);
      let changed = false;
      for (const key of emailLookupKeys(email)) if (!changed) changed = await store.accounts.setPlanByEmail(key, plan);
      if (!changed) {
        process.stderr.write(`codeloom: no account with email ${email}\n`);
        return 1;
      }
      print(flags, { email, plan }, `${email} is now on the ${plan} plan.`);
      return 0;
    }
    if (command === 'admin' && (sub === 'grant' || sub === 'revoke')) {
      const [email] = rest;
      if (!email) return usage(`codeloom admin ${sub} EMAIL`);
      let changed = false;
      for (const key of emailLookupKeys(email)) if (!changed) changed = await store.accounts.setAdminByEmail(key, sub === 'grant');
      if (!changed) {
        process.stderr.write(`codeloom: no account with email ${email}\n`);
        return 1;
      }
      print(flags, { email, admin: sub === 'grant' }, sub === 'grant' ? `${email} is now an administrator of this server.` : `${email} is no longer an administrator of this server.`);
      return 0;
    }
    if (command === 'admin' && sub === 'users') return await listUsers(store, flags);
    return usage(`unknown command: ${args.join(' ')} (see codeloom --help)`);
  } finally {
    await handle.close();
  }
}

function usage(message: string): number {
  process.stderr.write(`codeloom: ${message}\n`);
  return 2;
}
