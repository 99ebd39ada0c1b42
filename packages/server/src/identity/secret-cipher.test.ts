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
