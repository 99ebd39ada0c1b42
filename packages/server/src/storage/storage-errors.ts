import { UniqueViolation } from '../errors.js';

/** A driver's unique-constraint error, whatever the dialect (PostgreSQL 23505, SQLite's two codes). */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string } | null;
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** Runs `work`, turning a unique-constraint error into the dialect-free UniqueViolation (errors/unique-violation.ts). */
export async function translateUnique<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isUniqueViolation(error)) throw new UniqueViolation();
    throw error;
  }
}

/** PostgreSQL refusing text it cannot store (NUL, invalid UTF-8): the caller's input, so a 400, never a 500. */
export function isUnstorableText(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  return code === '22021' || code === '22P05';
}
