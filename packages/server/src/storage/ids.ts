import { randomBytes } from 'node:crypto';

export type IdPrefix = 'usr' | 'org' | 'key' | 'prj' | 'agt' | 'wfl' | 'run' | 'gen' | 'ses' | 'cli';

/** Opaque, unguessable ids with a type prefix (CONTRACT §1). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBytes(15).toString('base64url')}`;
}

export const nowIso = () => new Date().toISOString();
