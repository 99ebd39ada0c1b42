/**
 * A project file's path as written through the API (PUT/DELETE /projects/{id}/files/{path}, revisions saved by
 * runs): relative, already normalised, at most 500 bytes (the column and the read route's limit). Returns why
 * a path is refused, or null when it is fine. Refused rather than silently rewritten, so what is stored is
 * what was asked for.
 */
export const MAX_PATH_BYTES = 500;

export function pathProblem(path: string): string | null {
  if (path.length === 0) return 'must not be empty';
  if (Buffer.byteLength(path) > MAX_PATH_BYTES) return `must be at most ${MAX_PATH_BYTES} bytes`;
  // Control characters (NUL, newlines, …) and backslashes (a separator elsewhere) have no place in a path.
  if (/[\u0000-\u001f\u007f\\]/.test(path)) return 'must not contain control characters or backslashes';
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return 'must be relative (no leading "/" or drive letter)';
  if (path.endsWith('/')) return 'must name a file, not a directory (no trailing "/")';
  for (const segment of path.split('/')) {
    if (segment === '') return 'must be normalised (no empty segment, "//")';
    if (segment === '..') return 'must not contain ".." segments';
    if (segment === '.') return 'must be normalised (no "." segment)';
  }
  if (path.normalize('NFC') !== path) return 'must be in Unicode normal form C';
  return null;
}
