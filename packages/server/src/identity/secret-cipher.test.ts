import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSecretKey, SecretCipher } from './secret-cipher.js';

describe('SecretCipher', () => {
  it('seals and opens; the sealed text holds neither the secret nor the key', () => {
    const cipher = new SecretCipher('k1-secret');
    const sealed = cipher.seal('sk-live-123');
    expect(sealed).not.toContain('sk-live-123');
    expect(sealed).not.toContain('k1-secret');
    expect(sealed.startsWith(`v1.${cipher.currentId}.`)).toBe(true);
    expect(cipher.open(sealed)).toBe('sk-live-123');
    expect(cipher.seal('x')).not.toBe(cipher.seal('x')); // a fresh IV each time
  });

  it('rotates by key id: the old key opens old values, which need re-sealing', () => {
    const old = new SecretCipher('old-key');
    const sealed = old.seal('sk-1');
    expect(() => new SecretCipher('new-key').open(sealed)).toThrow(old.currentId);
    const rotated = new SecretCipher('new-key', ['old-key']);
    expect(rotated.open(sealed)).toBe('sk-1');
    expect(rotated.needsRotation(sealed)).toBe(true);
    const resealed = rotated.seal('sk-1');
    expect(rotated.needsRotation(resealed)).toBe(false);
    expect(new SecretCipher('new-key').open(resealed)).toBe('sk-1');
  });

  it('refuses an altered value', () => {
    const cipher = new SecretCipher('k');
    const parts = cipher.seal('secret-value').split('.');
    parts[4] = Buffer.from('tampered!!!!').toString('base64url');
    expect(() => cipher.open(parts.join('.'))).toThrow();
    const other = cipher.seal('secret-value').split('.');
    other[1] = 'ffffffffffffffff';
    expect(() => cipher.open(other.join('.'))).toThrow(/ffffffffffffffff/);
  });

  it('makes a key in the data directory (0600) when none is configured, and keeps it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'codeloom-key-'));
    const first = loadSecretKey(undefined, dir);
    expect(first.generated).toBe(join(dir, 'secret.key'));
    expect(statSync(first.generated!).mode & 0o777).toBe(0o600);
    expect(readFileSync(first.generated!, 'utf8').trim()).toBe(first.key);
    expect(loadSecretKey(undefined, dir).key).toBe(first.key);
    expect(loadSecretKey('configured', dir)).toEqual({ key: 'configured', generated: undefined });
  });
});

describe('loadSecretKey with processes starting together', () => {
  it('every process that makes the key at the same time ends up with the same one, and no temporary file is left', async () => {
    const { mkdtempSync, readdirSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { fork } = await import('node:child_process');
    const dir = mkdtempSync(join(tmpdir(), 'codeloom-key-race-'));
    const script = join(dir, 'load.mjs');
    const { writeFileSync } = await import('node:fs');
    // Eight processes race on one data directory: each prints the key it got.
    writeFileSync(script, `const { loadSecretKey } = await import(${JSON.stringify(new URL('./secret-cipher.ts', import.meta.url).href)});\nprocess.send(loadSecretKey(undefined, ${JSON.stringify(join(dir, 'data'))}).key);\n`);
    const keys = await Promise.all(Array.from({ length: 8 }, () => new Promise<string>((resolve, reject) => {
      const child = fork(script, { execArgv: ['--import', 'tsx'], stdio: 'ignore' });
      child.once('message', (m) => resolve(String(m)));
      child.once('error', reject);
      child.once('exit', (code) => { if (code) reject(new Error(`exit ${code}`)); });
    })));
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]!.length).toBeGreaterThan(20);
    expect(readdirSync(join(dir, 'data'))).toEqual(['secret.key']);
  }, 60_000);
});
