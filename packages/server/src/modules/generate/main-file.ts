import type { GeneratedFile } from '@codeloom/protocol';

const TEST_OR_DOC = /(^|\/)(tests?|__tests__|spec|docs?)\/|[._-](test|spec)\.[a-z]+$|_test\.go$|^readme|\.md$|(^|\/)(package\.json|cargo\.toml|pyproject\.toml|go\.mod|\.gitignore)$/i;

/** `code` in a result: the first file that is neither a test, a manifest nor documentation. */
export function pickMainFile(files: GeneratedFile[]): GeneratedFile {
  return files.find((f) => !TEST_OR_DOC.test(f.path)) ?? files[0]!;
}
