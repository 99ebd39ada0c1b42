import type { GeneratedFile } from '@codeloom/protocol';

/**
 * What the install phase lets npm install (issue 22, CONTRACT §12.1): only packages from the configured
 * registry. Every dependency specifier of package.json (dependencies, devDependencies, optionalDependencies,
 * peerDependencies, bundleDependencies' names, overrides, resolutions) must be a plain version, range or
 * dist-tag, or an `npm:name@range` alias to one; URLs, git (`git+…`, `github:`, `user/repo`, `git@host:…`),
 * `file:`, `link:`, `workspace:` and other protocols, local paths and tarball files are refused, and so are
 * `workspaces`. In package-lock.json, `link` entries, folders outside node_modules and any non-registry
 * specifier or `resolved` (git, file…) are refused; `resolved` tarball URLs of another registry only make
 * the lock file unused (npm then resolves from package.json through the registry), and the install says so.
 * The check is by grammar, stricter than npm's own parser (npm-package-arg): whatever passes can only be a
 * registry lookup.
 */

export interface ManifestProblem {
  /** Where: `package.json dependencies["x"]`, `package-lock.json packages["node_modules/x"].resolved`. */
  where: string;
  /** The offending value, as written. */
  value: string;
  /** Why it is not a registry dependency. */
  reason: string;
}

export interface ManifestCheck {
  /** Non-empty: refuse the install, nothing is fetched. */
  refused: ManifestProblem[];
  /** Non-empty: package-lock.json is left out of the install (its tarballs are not under the registry). */
  lockDropped: ManifestProblem[];
  /** The files to put in the install sandbox: package.json, and package-lock.json unless dropped. */
  files: GeneratedFile[];
}

const PACKAGE_NAME = /^(?:@[a-z0-9~-][a-z0-9._~-]*\/)?[a-z0-9~-][a-z0-9._~-]*$/i;
/** A semver version or range (`1.2.3`, `^1`, `>=1 <2 || 3.x`, `*`, ``) or a dist-tag (`latest`, `next`): no `:`, `/`, `\`, `@`, `#`. */
const REGISTRY_SPEC = /^[A-Za-z0-9_.+\-^~<>=|* ]{0,256}$/;
const TARBALL_FILE = /[.](?:tgz|tar\.gz|tar)$/i;
const SCP_GIT = /^[^@]+@[^:.]+\.[^:]+:.+$/;

export const isPackageName = (name: string) => name.length <= 214 && PACKAGE_NAME.test(name);

const show = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value) ?? String(value));

/** Why `spec` is not a plain registry version/range/tag, or undefined when it is one. */
function plainRegistryRefusal(spec: string): string | undefined {
  if (REGISTRY_SPEC.test(spec) && !spec.startsWith('.') && !TARBALL_FILE.test(spec.trim())) return undefined;
  const t = spec.trim().toLowerCase();
  const scheme = /^([a-z][a-z0-9+.-]*):/.exec(t)?.[1];
  if (scheme === 'file') return 'a local file or directory (file:)';
  if (scheme === 'link') return 'a link to a local directory (link:)';
  if (scheme === 'workspace') return 'a workspace reference (workspace:)';
  if (scheme === 'github' || scheme === 'gitlab' || scheme === 'bitbucket' || scheme === 'gist') return `a hosted git repository (${scheme}:)`;
  if (scheme === 'git' || scheme?.startsWith('git+') || scheme === 'ssh') return `a git repository (${scheme}:)`;
  if (scheme === 'http' || scheme === 'https') return `a URL (${scheme}:), not the registry`;
  if (scheme === 'npm') return 'an npm: alias inside an alias';
  if (/^(?:\.{1,2}(?:[/\\]|$)|~[/\\]|[/\\]|[a-z]:)/.test(t)) return 'a local path';
  if (SCP_GIT.test(t)) return 'a git repository (user@host:path)';
  if (scheme && !/^[a-z]:/.test(t)) return `not a registry dependency (${scheme}:)`;
  if (TARBALL_FILE.test(t)) return 'a tarball file';
  if (t.includes('/')) return 'a GitHub shorthand (user/repo) or a path';
  return 'not a version, range or tag';
}

/**
 * Why a dependency specifier is not a registry dependency, or undefined when it is: a version, range or tag,
 * or `npm:name`, `npm:name@range`.
 */
export function specifierRefusal(spec: unknown): string | undefined {
  if (typeof spec !== 'string') return `not a string (${typeof spec})`;
  if (!/^npm:/i.test(spec)) return plainRegistryRefusal(spec);
  const rest = spec.slice(4);
  const at = rest.indexOf('@', 1);
  const name = at < 0 ? rest : rest.slice(0, at);
  if (!isPackageName(name)) return `an npm: alias to an invalid package name (${JSON.stringify(name)})`;
  if (at < 0) return undefined;
  const inner = plainRegistryRefusal(rest.slice(at + 1));
  return inner === undefined ? undefined : `an npm: alias to ${inner}`;
}

const DEPENDENCY_FIELDS = ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'] as const;
const key = (k: string) => `[${JSON.stringify(k)}]`;
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every dependency map of one manifest-like object (package.json, a lock file's package entry). */
function checkDependencyMaps(where: string, pkg: Record<string, unknown>, problems: ManifestProblem[], fields: readonly string[] = DEPENDENCY_FIELDS): void {
  for (const field of fields) {
    const deps = pkg[field];
    if (deps === undefined) continue;
    if (!isRecord(deps)) { problems.push({ where: `${where}${field}`, value: show(deps), reason: 'not an object of name: version' }); continue; }
    for (const [name, spec] of Object.entries(deps)) {
      if (!isPackageName(name)) { problems.push({ where: `${where}${field}${key(name)}`, value: show(spec), reason: 'not a valid package name' }); continue; }
      const reason = specifierRefusal(spec);
      if (reason) problems.push({ where: `${where}${field}${key(name)}`, value: show(spec), reason });
    }
  }
}

/** npm's `overrides` (nested objects; `.` for the package itself; `$name` for a direct dependency's version) and yarn's `resolutions`. */
function checkOverrides(where: string, value: unknown, problems: ManifestProblem[]): void {
  if (typeof value === 'string') {
    if (value.startsWith('$')) {
      if (!isPackageName(value.slice(1))) problems.push({ where, value, reason: 'a $reference to an invalid package name' });
      return;
    }
    const reason = specifierRefusal(value);
    if (reason) problems.push({ where, value, reason });
  } else if (isRecord(value)) {
    for (const [k, v] of Object.entries(value)) checkOverrides(`${where}${key(k)}`, v, problems);
  } else problems.push({ where, value: show(value), reason: 'not a version or an object of overrides' });
}

function checkPackageJson(content: string, problems: ManifestProblem[]): void {
  let pkg: unknown;
  try { pkg = JSON.parse(content); } catch { problems.push({ where: 'package.json', value: content.slice(0, 80), reason: 'not valid JSON' }); return; }
  if (!isRecord(pkg)) { problems.push({ where: 'package.json', value: show(pkg).slice(0, 80), reason: 'not a JSON object' }); return; }
  checkDependencyMaps('package.json ', pkg, problems);
  for (const field of ['bundleDependencies', 'bundledDependencies']) {
    const bundled = pkg[field];
    if (bundled === undefined || typeof bundled === 'boolean') continue;
    if (!Array.isArray(bundled)) { problems.push({ where: `package.json ${field}`, value: show(bundled), reason: 'not a list of package names' }); continue; }
    for (const name of bundled) if (typeof name !== 'string' || !isPackageName(name)) problems.push({ where: `package.json ${field}`, value: show(name), reason: 'not a package name' });
  }
  if (pkg.overrides !== undefined) checkOverrides('package.json overrides', pkg.overrides, problems);
  if (pkg.resolutions !== undefined) checkOverrides('package.json resolutions', pkg.resolutions, problems);
  if (pkg.workspaces !== undefined) problems.push({ where: 'package.json workspaces', value: show(pkg.workspaces), reason: 'a list of workspaces (local links; only registry packages are installed)' });
}

/** Whether `resolved` is a tarball URL under the registry's origin and path. */
function underRegistry(resolved: string, base: URL): boolean {
  try {
    const url = new URL(resolved);
    return url.origin === base.origin && url.pathname.startsWith(base.pathname) && !url.username && !url.password;
  } catch { return false; }
}

function checkLock(content: string, base: URL, refused: ManifestProblem[], dropped: ManifestProblem[]): void {
  let lock: unknown;
  try { lock = JSON.parse(content); } catch { refused.push({ where: 'package-lock.json', value: content.slice(0, 80), reason: 'not valid JSON' }); return; }
  if (!isRecord(lock)) { refused.push({ where: 'package-lock.json', value: show(lock).slice(0, 80), reason: 'not a JSON object' }); return; }
  const resolvedOf = (where: string, entry: Record<string, unknown>) => {
    const resolved = entry.resolved;
    if (resolved === undefined) return;
    if (typeof resolved !== 'string') refused.push({ where: `${where}.resolved`, value: show(resolved), reason: 'not a string' });
    else if (underRegistry(resolved, base)) return;
    else if (/^https?:\/\//i.test(resolved)) dropped.push({ where: `${where}.resolved`, value: resolved, reason: `not under the registry ${base.href}` });
    else refused.push({ where: `${where}.resolved`, value: resolved, reason: plainRegistryRefusal(resolved) ?? 'not a registry tarball URL' });
  };
  // lockfileVersion 2 and 3: a flat map of install locations.
  if (lock.packages !== undefined) {
    if (!isRecord(lock.packages)) refused.push({ where: 'package-lock.json packages', value: show(lock.packages).slice(0, 80), reason: 'not an object' });
    else for (const [location, entry] of Object.entries(lock.packages)) {
      const where = `package-lock.json packages${key(location)}`;
      if (!isRecord(entry)) { refused.push({ where, value: show(entry).slice(0, 80), reason: 'not an object' }); continue; }
      if (location !== '' && !/^node_modules\/(?:(?:@[^/]+\/)?[^/]+\/node_modules\/)*(?:@[^/]+\/)?[^/]+$/.test(location)) refused.push({ where, value: location, reason: 'a local folder outside node_modules (a workspace or link)' });
      if (entry.link !== undefined && entry.link !== false) refused.push({ where: `${where}.link`, value: show(entry.link), reason: 'a link to a local folder' });
      resolvedOf(where, entry);
      checkDependencyMaps(`${where}.`, entry, refused);
    }
  }
  // lockfileVersion 1 (and v2's copy of it): nested `dependencies` with `version` (a URL or path for non-registry ones) and `requires`.
  const walk = (where: string, deps: unknown) => {
    if (deps === undefined) return;
    if (!isRecord(deps)) { refused.push({ where, value: show(deps).slice(0, 80), reason: 'not an object' }); return; }
    for (const [name, entry] of Object.entries(deps)) {
      const at = `${where}${key(name)}`;
      if (!isPackageName(name)) refused.push({ where: at, value: name, reason: 'not a valid package name' });
      if (!isRecord(entry)) { refused.push({ where: at, value: show(entry).slice(0, 80), reason: 'not an object' }); continue; }
      if (entry.version !== undefined) { const reason = specifierRefusal(entry.version); if (reason) refused.push({ where: `${at}.version`, value: show(entry.version), reason }); }
      resolvedOf(at, entry);
      checkDependencyMaps(`${at}.`, entry, refused, ['requires']);
      walk(`${at}.dependencies`, entry.dependencies);
    }
  };
  walk('package-lock.json dependencies', lock.dependencies);
}

/** Checks package.json and package-lock.json among `files` against the registry at `registryBase` (a URL ending in `/`). */
export function checkManifest(files: GeneratedFile[], registryBase: URL): ManifestCheck {
  const refused: ManifestProblem[] = [];
  const lockDropped: ManifestProblem[] = [];
  const pkg = files.find((f) => f.path === 'package.json');
  const lock = files.find((f) => f.path === 'package-lock.json');
  if (pkg) checkPackageJson(pkg.content, refused);
  if (lock) checkLock(lock.content, registryBase, refused, lockDropped);
  const keep = lockDropped.length ? [pkg] : [pkg, lock];
  return { refused, lockDropped, files: keep.filter((f): f is GeneratedFile => f !== undefined) };
}

const list = (problems: ManifestProblem[], max = 50) => [
  ...problems.slice(0, max).map((p) => `  ${p.where}: ${JSON.stringify(p.value)} is ${p.reason}`),
  ...(problems.length > max ? [`  … and ${problems.length - max} more`] : []),
].join('\n');

/** The install check's output for a refused manifest. */
export function refusalOutput(refused: ManifestProblem[]): string {
  return `Refused before installing: only packages from the registry are installed (a version, range or tag, or npm:name@range). Replace these dependencies with registry packages:\n${list(refused)}\nNothing was installed.`;
}

/** The note put before npm's output when package-lock.json was left out. */
export function lockDroppedNote(dropped: ManifestProblem[]): string {
  return `package-lock.json was not used (its tarballs are not under the configured registry); installing from package.json:\n${list(dropped, 10)}\n`;
}
