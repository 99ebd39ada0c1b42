import { createInterface } from 'node:readline';
import { clientFor, print, resolveBaseUrl, UsageError, type GlobalFlags } from '../cli-context.js';
import { credentialsPath, forgetCredentials, loadCredentials, saveCredentials } from '../credentials-store.js';
import { printPage, type Paging } from '../paging.js';
import { describeLimits, parseKeyLimits, type KeyLimitFlags } from './key-limits.js';

export async function readSecret(prompt: string): Promise<string> {
  if (!process.stdin.isTTY) {
    const rl = createInterface({ input: process.stdin });
    for await (const line of rl) { rl.close(); return line; }
    return '';
  }
  process.stderr.write(prompt);
  return new Promise((resolve) => {
    const chars: string[] = [];
    process.stdin.setRawMode(true);
    process.stdin.resume();
    const onData = (buf: Buffer) => {
      for (const c of buf.toString('utf8')) {
        if (c === '\r' || c === '\n') {
          process.stdin.setRawMode(false); process.stdin.pause(); process.stdin.off('data', onData);
          process.stderr.write('\n');
          return resolve(chars.join(''));
        }
        if (c === '\u0003') process.exit(130);
        if (c === '\u007f') chars.pop(); else chars.push(c);
      }
    };
    process.stdin.on('data', onData);
  });
}

/**
 * `codeloom login`: with --email (password from --password, stdin or a
 * prompt), or --api-key. Nothing is saved until the server has accepted the
 * credential, so a failed login leaves the previous one in place.
 */
export async function login(flags: GlobalFlags, opts: { email?: string; password?: string; apiKey?: string }): Promise<number> {
  const baseUrl = resolveBaseUrl(flags, loadCredentials());
  if (opts.apiKey) {
    const who = await clientFor({ ...flags, baseUrl }, { credentials: { apiKey: opts.apiKey } }).verify();
    saveCredentials({ baseUrl, apiKey: opts.apiKey, email: who.user.email });
    print(flags, { user: who.user, credential: who.credential }, `Signed in to ${baseUrl} as ${who.user.email} with an API key (${credentialsPath()}).`);
    return 0;
  }
  if (!opts.email) throw new UsageError('codeloom login --email EMAIL [--password PASSWORD] | --api-key KEY');
  const password = opts.password ?? (await readSecret('Password: '));
  const client = clientFor({ ...flags, baseUrl }, { anonymous: true });
  const session = await client.auth.login({ email: opts.email, password });
  saveCredentials({ baseUrl, accessToken: session.accessToken, ...(session.refreshToken ? { refreshToken: session.refreshToken } : {}), email: session.user?.email ?? opts.email });
  print(flags, { user: session.user }, `Signed in to ${baseUrl} as ${session.user?.email ?? opts.email}${session.user ? ` (${session.user.plan} plan)` : ''}.`);
  return 0;
}

/** `codeloom logout`: ends the session on the server, forgets the tokens or key, keeps the server's URL. */
export async function logout(flags: GlobalFlags): Promise<number> {
  const stored = loadCredentials();
  if (stored?.accessToken) {
    try { await clientFor(flags).auth.logout(); } catch { /* already ended, or unreachable: forget it here anyway */ }
  }
  forgetCredentials();
  print(flags, { success: true }, stored?.baseUrl ? `Signed out of ${stored.baseUrl}.` : 'Signed out.');
  return 0;
}

export async function whoami(flags: GlobalFlags): Promise<number> {
  const profile = await clientFor(flags).user.profile();
  print(flags, profile, `${profile.email} (${profile.organization.plan} plan, ${profile.environment}) — permissions: ${profile.permissions.join(', ')}`);
  return 0;
}

const KEYS_USAGE = 'codeloom keys create|list|update|revoke (see codeloom keys --help)';

export async function keys(flags: GlobalFlags, sub: string | undefined, args: string[], opts: { scopes?: string[] | undefined; expires?: string | undefined; name?: string | undefined; limits: KeyLimitFlags; paging: Paging }): Promise<number> {
  if (sub !== 'create' && sub !== 'list' && sub !== 'update' && sub !== 'revoke') throw new UsageError(KEYS_USAGE);
  const limits = parseKeyLimits(opts.limits, sub === 'update');
  const client = clientFor(flags);
  if (sub === 'create') {
    const name = args[0];
    if (!name) throw new UsageError('codeloom keys create NAME [--scope read:code ...] [--expires 2027-01-01T00:00:00Z] [--rpm N] [--tpm N] [--monthly-tokens N]');
    const key = await client.apiKeys.create({ name, ...(opts.scopes?.length ? { scopes: opts.scopes as never } : {}), ...(opts.expires ? { expires_at: opts.expires } : {}), ...(flags.sandbox ? { environment: 'sandbox' as const } : {}), ...limits });
    print(flags, key, `${key.key}\n(${key.id}; ${describeLimits(key.limits)}; shown this once — store it now)`);
    return 0;
  }
  if (sub === 'list') {
    const page = await client.apiKeys.page(opts.paging.page, { limit: opts.paging.limit });
    printPage(flags, page, (k) => `${k.id}  ${k.prefix}…  ${k.name}  ${k.scopes.join(',')}  ${describeLimits(k.limits)}  last used ${k.last_used_at ?? 'never'}`, '(no keys)');
    return 0;
  }
  if (sub === 'update') {
    const body = { ...(opts.name !== undefined ? { name: opts.name } : {}), ...limits };
    if (!args[0] || !Object.keys(body).length) throw new UsageError('codeloom keys update KEY_ID [--name NAME] [--rpm N|none] [--tpm N|none] [--monthly-tokens N|none]');
    const key = await client.apiKeys.update(args[0], body);
    print(flags, key, `${key.id}  ${key.name}  ${describeLimits(key.limits)}`);
    return 0;
  }
  if (!args[0]) throw new UsageError('codeloom keys revoke KEY_ID');
  await client.apiKeys.revoke(args[0]);
  print(flags, { success: true, id: args[0] }, `Revoked ${args[0]}.`);
  return 0;
}

export async function models(flags: GlobalFlags): Promise<number> {
  const list = await clientFor(flags).models.list();
  const lines = list.map((m) => `${m.default ? '*' : ' '} ${m.id}  (${m.provider}) ${m.description}`);
  // A fresh server serves only the template model: say how to connect a real one.
  if (list.every((m) => m.id === 'sandbox')) lines.push('Only the template model sandbox (not AI) is connected: an administrator adds real models with codeloom deployments add (docs/models.md).');
  print(flags, list, lines.join('\n'));
  return 0;
}
