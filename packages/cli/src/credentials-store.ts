import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** What `codeloom login` keeps: the server and either session tokens or an API key. Never printed. */
export interface StoredCredentials {
  baseUrl: string;
  accessToken?: string;
  refreshToken?: string;
  apiKey?: string;
  email?: string;
}

/** $CODELOOM_CONFIG_DIR, else $XDG_CONFIG_HOME/codeloom, else ~/.config/codeloom. */
export function configDir(): string {
  if (process.env.CODELOOM_CONFIG_DIR) return process.env.CODELOOM_CONFIG_DIR;
  return join(process.env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'codeloom');
}

const file = () => join(configDir(), 'credentials.json');

export function loadCredentials(): StoredCredentials | undefined {
  try {
    return JSON.parse(readFileSync(file(), 'utf8')) as StoredCredentials;
  } catch {
    return undefined;
  }
}

/** Written with mode 0600 (and the folder 0700): these are secrets. */
export function saveCredentials(credentials: StoredCredentials): void {
  mkdirSync(dirname(file()), { recursive: true, mode: 0o700 });
  writeFileSync(file(), `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file(), 0o600);
}

export function clearCredentials(): void {
  rmSync(file(), { force: true });
}

/** After a logout: the secrets go, the server stays, so the next `codeloom login` goes where the last one did. */
export function forgetCredentials(): void {
  const stored = loadCredentials();
  if (stored?.baseUrl) saveCredentials({ baseUrl: stored.baseUrl });
  else clearCredentials();
}

export const credentialsPath = file;
