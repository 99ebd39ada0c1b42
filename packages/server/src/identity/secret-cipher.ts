import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync, linkSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Secrets at rest (a deployment's API key, CONTRACT §12.4): AES-256-GCM under a key derived from
 * CODELOOM_SECRET_KEY, stored as `v1.<key id>.<iv>.<tag>.<ciphertext>` (base64url parts). The key id is the
 * first 8 bytes of SHA-256 over the derived key, so a value names the key that sealed it: after a rotation
 * (the old key moved to CODELOOM_SECRET_KEYS_PREVIOUS) old values still open, and are sealed again under
 * the current key (`needsRotation`).
 */
export class SecretCipher {
  private readonly keys = new Map<string, Buffer>();
  private current: string | undefined;

  /**
   * `current` and `previous` are the secrets as configured (any text; 32 bytes or more of entropy recommended).
   * `current` may be a function: it is asked the first time a secret is sealed or opened, so a server that
   * stores no secret never makes or reads a key file.
   */
  constructor(private readonly currentSource: string | (() => string), private readonly previous: readonly string[] = []) {}

  /** The id of the key new values are sealed under. */
  get currentId(): string {
    if (this.current === undefined) {
      const key = deriveKey(typeof this.currentSource === 'string' ? this.currentSource : this.currentSource());
      this.current = keyId(key);
      this.keys.set(this.current, key);
      for (const p of this.previous) {
        const k = deriveKey(p);
        if (!this.keys.has(keyId(k))) this.keys.set(keyId(k), k);
      }
    }
    return this.current;
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const id = this.currentId;
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(id)!, iv);
    cipher.setAAD(Buffer.from(`v1.${id}`));
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', id, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
  }

  /** The plaintext; throws naming the key id when no configured key sealed it, or when the value was altered. */
  open(sealed: string): string {
    const [version, id, iv, tag, data] = sealed.split('.');
    if (version !== 'v1' || !id || iv === undefined || tag === undefined || data === undefined) throw new Error('not a sealed secret');
    void this.currentId; // the keys are loaded on first use
    const key = this.keys.get(id);
    if (!key) throw new Error(`sealed under key ${id}, which is neither CODELOOM_SECRET_KEY nor one of CODELOOM_SECRET_KEYS_PREVIOUS`);
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(`v1.${id}`));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  }

  /** Whether a sealed value was sealed under an older key (re-seal it under the current one). */
  needsRotation(sealed: string): boolean {
    return sealed.split('.')[1] !== this.currentId;
  }
}

const deriveKey = (secret: string): Buffer => createHash('sha256').update(`codeloom-secret-key\0${secret}`).digest();
const keyId = (key: Buffer): string => createHash('sha256').update(key).digest('hex').slice(0, 16);

/**
 * The key secrets are sealed with: CODELOOM_SECRET_KEY, else one the server made and keeps in the data
 * directory (`secret.key`, mode 0600). `generated` says the latter (the caller warns once: instances sharing
 * a database must share one key).
 */
export function loadSecretKey(configured: string | undefined, dataDir: string): { key: string; generated: string | undefined } {
  if (configured) return { key: configured, generated: undefined };
  const file = join(dataDir, 'secret.key');
  if (existsSync(file)) return { key: readKeyFile(file), generated: file };
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32).toString('base64url');
  // Written whole under a private name, then linked into place: processes starting together on one data directory
  // all end up with the one key that won (link fails if the file exists), and none reads a half-written file.
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`;
  writeFileSync(temporary, `${key}\n`, { mode: 0o600, flag: 'wx' });
  try {
    chmodSync(temporary, 0o600);
    linkSync(temporary, file);
    return { key, generated: file };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return { key: readKeyFile(file), generated: file };
  } finally {
    rmSync(temporary, { force: true });
  }
}

function readKeyFile(file: string): string {
  const key = readFileSync(file, 'utf8').trim();
  if (!key) throw new Error(`${file} is empty: delete it (a new key is made at start) or set CODELOOM_SECRET_KEY`);
  return key;
}
