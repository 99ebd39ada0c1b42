/**
 * The install phase's manifest check (issue 22 item 6, CONTRACT §12.1): only registry dependencies pass;
 * every URL, git, file, link, workspace, path and tarball specifier is refused, and named, before npm runs.
 */
import { describe, expect, it } from 'vitest';
import { checkManifest, refusalOutput, specifierRefusal } from './manifest-specifiers.js';
import { registryBase } from './registry-proxy.js';

const NPMJS = registryBase('https://registry.npmjs.org/');
const pkgFile = (pkg: unknown) => ({ path: 'package.json', content: JSON.stringify(pkg) });
const lockFile = (lock: unknown) => ({ path: 'package-lock.json', content: JSON.stringify(lock) });

describe('specifierRefusal', () => {
  it.each([
    '1.2.3', 'v1.2.3', '=1.2.3', '1.0.0-beta.1', '1.0.0+build.5', '^1.2.3', '~1.2', '~1', '>=1.0.0 <2.0.0', '>1 || <0.5', '1.2.3 - 2.3.4',
    '1.x', '1.2.X', '*', 'x', '', 'latest', 'next', 'beta', 'canary_2', '^0.0.1 || ^1.0.0',
    'npm:lodash', 'npm:lodash@^4.17.0', 'npm:@types/node@20', 'npm:@scope/pkg@latest', 'npm:string-width@^4.2.0',
  ])('allows the registry specifier %j', (spec) => {
    expect(specifierRefusal(spec)).toBeUndefined();
  });

  it.each([
    ['https://evil.example/pkg.tgz', /URL \(https:\)/],
    ['http://169.254.169.254/latest/meta-data', /URL \(http:\)/],
    ['HTTPS://EVIL.EXAMPLE/x.tgz', /URL/],
    ['git://github.com/u/r.git', /git repository \(git:\)/],
    ['git+ssh://git@github.com/u/r.git', /git repository \(git\+ssh:\)/],
    ['git+https://github.com/u/r.git#v1', /git repository \(git\+https:\)/],
    ['git+http://intranet/r.git', /git repository/],
    ['git+file:///srv/repo', /git repository/],
    ['ssh://git@host/r.git', /git repository \(ssh:\)/],
    ['git@github.com:user/repo.git', /git repository \(user@host:path\)/],
    ['github:user/repo', /hosted git repository \(github:\)/],
    ['gitlab:user/repo', /hosted git repository \(gitlab:\)/],
    ['bitbucket:user/repo', /hosted git repository \(bitbucket:\)/],
    ['gist:11081aaa281', /hosted git repository \(gist:\)/],
    ['user/repo', /GitHub shorthand/],
    ['user/repo#main', /GitHub shorthand/],
    ['file:../lib', /file:/],
    ['FILE:/etc', /file:/],
    ['link:../lib', /link:/],
    ['workspace:*', /workspace:/],
    ['workspace:^1.0.0', /workspace:/],
    ['portal:../x', /not a registry dependency \(portal:\)/],
    ['patch:lodash@1#./p.patch', /not a registry dependency \(patch:\)/],
    ['./lib', /local path/],
    ['../lib', /local path/],
    ['..', /local path/],
    ['.', /local path/],
    ['/etc/passwd', /local path/],
    ['~/lib', /local path/],
    ['C:\\lib', /local path/],
    ['\\\\server\\share', /local path/],
    ['pkg.tgz', /tarball file/],
    ['pkg-1.0.0.tar.gz', /tarball file/],
    ['pkg.tar', /tarball file/],
    [' https://evil.example/x.tgz', /URL/],
    ['1.0.0#frag', /not a version, range or tag/],
    ['latest@1', /not a version, range or tag/],
    ['1.0.0\n', /not a version, range or tag/],
    ['npm:https://evil.example/x.tgz', /alias to an invalid package name/],
    ['npm:../x', /alias to an invalid package name/],
    ['npm:lodash@https://evil.example/x.tgz', /alias to a URL/],
    ['npm:lodash@github:u/r', /alias to a hosted git repository/],
    ['npm:lodash@file:../x', /alias to a local file/],
    ['npm:a@npm:b@1', /alias to an npm: alias inside an alias/],
  ])('refuses %j', (spec, reason) => {
    expect(specifierRefusal(spec)).toMatch(reason);
  });

  it('refuses what is not a string', () => {
    expect(specifierRefusal(1)).toMatch(/not a string \(number\)/);
    expect(specifierRefusal({ version: '1' })).toMatch(/not a string/);
  });
});

describe('checkManifest', () => {
  it('passes a registry-only package.json and keeps the files', () => {
    const files = [pkgFile({ dependencies: { lodash: '^4.17.21', '@types/node': '20.x', alias: 'npm:chalk@5' }, devDependencies: { vitest: 'latest' }, peerDependencies: { react: '>=18' }, optionalDependencies: { fsevents: '*' }, bundleDependencies: ['lodash'], overrides: { foo: '1.0.0', bar: { '.': '2.0.0', baz: '$lodash' } }, resolutions: { '**/qux': '3.0.0' } }), { path: 'index.js', content: '' }];
    const result = checkManifest(files, NPMJS);
    expect(result.refused).toEqual([]);
    expect(result.lockDropped).toEqual([]);
    expect(result.files.map((f) => f.path)).toEqual(['package.json']);
  });

  it('names every offending dependency of every field, and why', () => {
    const { refused } = checkManifest([pkgFile({
      dependencies: { ok: '1.0.0', evil: 'https://evil.example/e.tgz', repo: 'git+ssh://git@github.com/u/r.git' },
      devDependencies: { short: 'user/repo', local: 'file:../x' },
      optionalDependencies: { lnk: 'link:../y' },
      peerDependencies: { ws: 'workspace:*' },
      bundleDependencies: ['ok', '../escape'],
      overrides: { deep: { '.': '1.0.0', inner: 'github:u/r' }, ref: '$../x' },
      resolutions: { '**/r': 'file:./r.tgz' },
      workspaces: ['packages/*'],
    })], NPMJS);
    expect(refused.map((p) => `${p.where} :: ${p.reason}`)).toEqual([
      'package.json dependencies["evil"] :: a URL (https:), not the registry',
      'package.json dependencies["repo"] :: a git repository (git+ssh:)',
      'package.json devDependencies["short"] :: a GitHub shorthand (user/repo) or a path',
      'package.json devDependencies["local"] :: a local file or directory (file:)',
      'package.json optionalDependencies["lnk"] :: a link to a local directory (link:)',
      'package.json peerDependencies["ws"] :: a workspace reference (workspace:)',
      'package.json bundleDependencies :: not a package name',
      'package.json overrides["deep"]["inner"] :: a hosted git repository (github:)',
      'package.json overrides["ref"] :: a $reference to an invalid package name',
      'package.json resolutions["**/r"] :: a local file or directory (file:)',
      'package.json workspaces :: a list of workspaces (local links; only registry packages are installed)',
    ]);
    const output = refusalOutput(refused);
    expect(output).toContain('package.json dependencies["evil"]: "https://evil.example/e.tgz" is a URL (https:), not the registry');
    expect(output).toMatch(/Nothing was installed\.$/);
  });

  it('refuses invalid dependency names and maps that are not objects', () => {
    const { refused } = checkManifest([pkgFile({ dependencies: { '../../etc': '1.0.0', 'node_modules/x': '1.0.0' }, devDependencies: ['lodash'] })], NPMJS);
    expect(refused.map((p) => p.reason)).toEqual(['not a valid package name', 'not a valid package name', 'not an object of name: version']);
  });

  it('refuses a package.json that is not JSON', () => {
    expect(checkManifest([{ path: 'package.json', content: '{ nope' }], NPMJS).refused[0]).toMatchObject({ where: 'package.json', reason: 'not valid JSON' });
  });

  it('keeps a lock file whose tarballs are all under the registry', () => {
    const lock = lockFile({
      lockfileVersion: 3,
      packages: {
        '': { name: 'p', dependencies: { lodash: '^4.17.21', a: 'npm:lodash@4' } },
        'node_modules/lodash': { version: '4.17.21', resolved: 'https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz', integrity: 'sha512-x' },
        'node_modules/a': { name: 'lodash', version: '4.17.21', resolved: 'https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz' },
        'node_modules/@s/b/node_modules/c': { version: '1.0.0', resolved: 'https://registry.npmjs.org/c/-/c-1.0.0.tgz', dependencies: { d: '^1' } },
      },
    });
    const result = checkManifest([pkgFile({ dependencies: { lodash: '^4.17.21' } }), lock], NPMJS);
    expect(result.refused).toEqual([]);
    expect(result.lockDropped).toEqual([]);
    expect(result.files.map((f) => f.path)).toEqual(['package.json', 'package-lock.json']);
  });

  it('refuses links, local folders, git and file entries in a lock file (v3 and v1)', () => {
    const lock = lockFile({
      lockfileVersion: 2,
      packages: {
        '': { dependencies: { x: 'git+https://github.com/u/x.git' } },
        'node_modules/linked': { resolved: 'libs/linked', link: true },
        'libs/linked': { version: '1.0.0' },
        'node_modules/x': { version: '1.0.0', resolved: 'git+ssh://git@github.com/u/x.git#abc' },
        'node_modules/f': { version: '1.0.0', resolved: 'file:../f.tgz' },
      },
      dependencies: {
        x: { version: 'git+https://github.com/u/x.git#abc', requires: { y: 'file:../y' } },
        z: { version: '1.0.0', resolved: 'https://registry.npmjs.org/z/-/z-1.0.0.tgz', dependencies: { w: { version: 'github:u/w' } } },
      },
    });
    const { refused } = checkManifest([pkgFile({ dependencies: { z: '1' } }), lock], NPMJS);
    expect(refused.map((p) => `${p.where} :: ${p.reason}`)).toEqual([
      'package-lock.json packages[""].dependencies["x"] :: a git repository (git+https:)',
      'package-lock.json packages["node_modules/linked"].link :: a link to a local folder',
      'package-lock.json packages["node_modules/linked"].resolved :: a GitHub shorthand (user/repo) or a path',
      'package-lock.json packages["libs/linked"] :: a local folder outside node_modules (a workspace or link)',
      'package-lock.json packages["node_modules/x"].resolved :: a git repository (git+ssh:)',
      'package-lock.json packages["node_modules/f"].resolved :: a local file or directory (file:)',
      'package-lock.json dependencies["x"].version :: a git repository (git+https:)',
      'package-lock.json dependencies["x"].requires["y"] :: a local file or directory (file:)',
      'package-lock.json dependencies["z"].dependencies["w"].version :: a hosted git repository (github:)',
    ]);
  });

  it('leaves out a lock file whose tarballs come from another registry or host, and says which', () => {
    const mirror = registryBase('https://mirror.example/npm/');
    const lock = lockFile({ lockfileVersion: 3, packages: {
      'node_modules/a': { version: '1.0.0', resolved: 'https://registry.npmjs.org/a/-/a-1.0.0.tgz' },
      'node_modules/b': { version: '1.0.0', resolved: 'https://mirror.example/other/b/-/b-1.0.0.tgz' },
      'node_modules/c': { version: '1.0.0', resolved: 'https://mirror.example/npm/c/-/c-1.0.0.tgz' },
      'node_modules/d': { version: '1.0.0', resolved: 'http://mirror.example/npm/d/-/d-1.0.0.tgz' },
    } });
    const result = checkManifest([pkgFile({ dependencies: { a: '1' } }), lock], mirror);
    expect(result.refused).toEqual([]);
    expect(result.lockDropped.map((p) => p.where)).toEqual([
      'package-lock.json packages["node_modules/a"].resolved',
      'package-lock.json packages["node_modules/b"].resolved',
      'package-lock.json packages["node_modules/d"].resolved',
    ]);
    expect(result.files.map((f) => f.path)).toEqual(['package.json']);
  });

  it('refuses a lock file that is not JSON', () => {
    expect(checkManifest([pkgFile({}), { path: 'package-lock.json', content: 'nope' }], NPMJS).refused[0]).toMatchObject({ where: 'package-lock.json', reason: 'not valid JSON' });
  });
});
