import { clientFor, print, resolveBaseUrl, UsageError, type GlobalFlags } from '../cli-context.js';
import { credentialsPath, loadCredentials, saveCredentials } from '../credentials-store.js';
import { readSecret } from './account-commands.js';

/** `codeloom register`: creates an account and signs in with it (the session is stored like `login`'s). */
export async function register(flags: GlobalFlags, opts: { email?: string | undefined; name?: string | undefined; password?: string | undefined }): Promise<number> {
  if (!opts.email || !opts.name) throw new UsageError('codeloom register --email EMAIL --name "YOUR NAME" [--password PASSWORD]');
  const baseUrl = resolveBaseUrl(flags, loadCredentials());
  const password = opts.password ?? (await readSecret('Choose a password (at least 8 characters): '));
  const session = await clientFor({ ...flags, baseUrl }, { anonymous: true }).auth.register({ email: opts.email, password, name: opts.name });
  saveCredentials({ baseUrl, accessToken: session.accessToken, ...(session.refreshToken ? { refreshToken: session.refreshToken } : {}), email: session.user?.email ?? opts.email });
  print(flags, { user: session.user }, `Registered ${session.user?.email ?? opts.email}${session.user?.plan ? ` (${session.user.plan} plan)` : ''} on ${baseUrl} and signed in (${credentialsPath()}).`);
  return 0;
}
