import { ConfigError, StartupError } from './errors.js';

/** The useful part of an error, on one line (a failed connect to "localhost" is an AggregateError with an empty message). */
export function reasonOf(error: unknown): string {
  const e = error as { message?: string; code?: string; errors?: unknown[] } | null;
  let text = e?.message || (Array.isArray(e?.errors) && e!.errors.length ? reasonOf(e!.errors[0]) : '') || e?.code || String(error);
  text = text.replace(/\s+/g, ' ').trim();
  return text || 'unknown error';
}

/** Runs one start-up step; a failure is reported against `setting`. */
export async function atStartup<T>(setting: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof StartupError) throw error;
    throw new StartupError(setting, reasonOf(error));
  }
}

/** The setting a failed listen() points at. */
export function listenSetting(error: unknown): string {
  const code = (error as { code?: string } | null)?.code;
  return code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' ? 'HOST' : 'PORT';
}

/**
 * "Codeloom failed to start: <setting>: <cause>", no stack trace: one line,
 * or for invalid settings one such line per problem (each stands on its own in a log).
 */
export function startupFailureLine(error: unknown): string {
  if (error instanceof ConfigError) return error.problems.map((p) => `Codeloom failed to start: ${p}`).join('\n');
  return `Codeloom failed to start: ${error instanceof StartupError ? error.message : reasonOf(error)}`;
}
