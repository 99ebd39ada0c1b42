import type { GenerationSpec, SandboxFile } from '../../project-files.js';

/** An entry point (HTTP API or command line) and its test. */
export interface JavaMain { files: SandboxFile[]; test: SandboxFile }

export interface JavaNames { pkg: string; dir: string; testDir: string; E: string; field: string; Field: string }

export function javaNames(spec: GenerationSpec): JavaNames {
  const pkg = `com.example.${spec.resource.flat}`;
  const dir = `src/main/java/${pkg.replace(/\./g, '/')}`;
  return { pkg, dir, testDir: dir.replace('src/main', 'src/test'), E: spec.entity.pascal, field: spec.field, Field: spec.field === 'title' ? 'Title' : 'Name' };
}

/** The shared check() of the main()-based tests: prints TAP-like lines, fails with AssertionError. */
export const javaCheck = String.raw`    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError("failed: " + what);
        }
        System.out.println("ok - " + what);
    }`;
