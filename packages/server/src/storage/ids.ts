import { randomFillSync } from 'node:crypto';

export type IdPrefix = 'usr' | 'org' | 'key' | 'prj' | 'agt' | 'wfl' | 'run' | 'gen' | 'ses' | 'cli' | 'bud' | 'whk' | 'whd' | 'evt' | 'log' | 'dep' | 'rev';

const ID_BYTES = 15;
/** CSPRNG bytes drawn 4 KiB at a time (one call instead of one per id), each byte handed out once. */
const pool = Buffer.alloc(ID_BYTES * 273);
let offset = pool.length;

/** Opaque, unguessable ids with a type prefix (CONTRACT §1): 120 random bits. */
export function newId(prefix: IdPrefix): string {
  if (offset + ID_BYTES > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const id = pool.toString('base64url', offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return `${prefix}_${id}`;
}

/**
 * `newId` with the creation time first (milliseconds in base 32: 9 characters, in order until the year 2527),
 * then the same 120 random bits. For rows inserted at a high rate (generations): ids made close together sort
 * together, so a batch of inserts touches one page of the primary-key index instead of one page per row.
 * `ms`: the time the id names (default now), e.g. when a row is written after the event it records.
 */
export function newTimeOrderedId(prefix: IdPrefix, ms = Date.now()): string {
  const id = newId(prefix);
  return `${prefix}_${ms.toString(32).padStart(9, '0')}${id.slice(prefix.length + 1)}`;
}

let lastMs = 0;
let lastIso = '';
/** The current time as RFC 3339 UTC; formatted once per millisecond (Date#toISOString is slow next to a string read). */
export const nowIso = (): string => {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
};
