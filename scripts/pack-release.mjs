// npm run pack:release [-- --out DIR]: build the publishable packages and pack them into DIR (default: release/),
// in the order they must be published: @codeloom/protocol, @codeloom/client, @codeloom/cli. The server, the
// sandbox model and the dashboard are private (the server runs from a checkout or the container image).
// Publishing (docs/releasing.md): npm publish DIR/codeloom-protocol-X.tgz, then client, then cli.
// --with-deps also packs their third-party dependencies (ws, @sinclair/typebox: what `npm ci` installed) into
// DIR/deps, so that the whole set installs with `npm install -g --offline` on a machine without a registry.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { root } from './build-if-needed.mjs';

export const PUBLISHED = ['protocol', 'client', 'cli'];

const { values } = parseArgs({ options: { out: { type: 'string' }, json: { type: 'boolean' }, 'with-deps': { type: 'boolean' } } });
const out = resolve(process.env.INIT_CWD ?? process.cwd(), values.out ?? resolve(root, 'release'));
const log = (line) => process.stderr.write(`${line}\n`);

const manifests = PUBLISHED.map((p) => JSON.parse(readFileSync(resolve(root, 'packages', p, 'package.json'), 'utf8')));
const version = manifests[0].version;
for (const m of manifests) {
  if (m.private) throw new Error(`${m.name} is private: it cannot be published`);
  if (m.version !== version) throw new Error(`${m.name} is ${m.version}, ${manifests[0].name} is ${version}: the published packages move together`);
  for (const [dep, range] of Object.entries(m.dependencies ?? {})) {
    if (dep.startsWith('@codeloom/') && (!manifests.some((o) => o.name === dep) || range !== version)) throw new Error(`${m.name} depends on ${dep}@${range}: only ${manifests.map((o) => `${o.name}@${version}`).join(', ')} are published`);
  }
}

const step = (what, cmd, args) => {
  log(`> ${what}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  if (r.status !== 0) {
    process.stderr.write(r.stdout ?? '');
    log(`${what} failed (exit ${r.status ?? r.signal})`);
    process.exit(r.status ?? 1);
  }
  return r.stdout;
};
step('tsc -b packages/cli packages/client', process.execPath, [resolve(root, 'node_modules/typescript/bin/tsc'), '-b', 'packages/cli', 'packages/client']);
step('node packages/client/build-cjs.mjs', process.execPath, [resolve(root, 'packages/client/build-cjs.mjs')]);
mkdirSync(out, { recursive: true });
const packed = JSON.parse(step(`npm pack ${PUBLISHED.map((p) => `-w packages/${p}`).join(' ')} --pack-destination ${out}`,
  process.platform === 'win32' ? 'npm.cmd' : 'npm',
  ['pack', '--json', '--loglevel=error', ...PUBLISHED.flatMap((p) => ['-w', `packages/${p}`]), '--pack-destination', out]));
const tarballs = PUBLISHED.map((p, i) => {
  const entry = packed.find((e) => e.name === manifests[i].name);
  if (!entry) throw new Error(`npm pack wrote no tarball for ${manifests[i].name}`);
  return { name: entry.name, version: entry.version, file: resolve(out, entry.filename), files: entry.files.length, size: entry.size };
});
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/** The third-party packages the published ones need, all the way down, as installed in the checkout's node_modules. */
function thirdPartyDeps() {
  const seen = new Map();
  const visit = (deps) => {
    for (const name of Object.keys(deps ?? {})) {
      if (name.startsWith('@codeloom/') || seen.has(name)) continue;
      const dir = resolve(root, 'node_modules', name);
      if (!existsSync(resolve(dir, 'package.json'))) throw new Error(`${name} is not in node_modules: run npm ci first`);
      const manifest = JSON.parse(readFileSync(resolve(dir, 'package.json'), 'utf8'));
      seen.set(name, dir);
      visit(manifest.dependencies);
    }
  };
  for (const m of manifests) visit(m.dependencies);
  return [...seen.values()];
}
const deps = [];
if (values['with-deps']) {
  const depsDir = resolve(out, 'deps');
  mkdirSync(depsDir, { recursive: true });
  const dirs = thirdPartyDeps();
  const packedDeps = JSON.parse(step(`npm pack (${dirs.length} third-party dependencies) --pack-destination ${depsDir}`, NPM, ['pack', '--json', '--loglevel=error', '--ignore-scripts', ...dirs, '--pack-destination', depsDir]));
  for (const d of packedDeps) deps.push({ name: d.name, version: d.version, file: resolve(depsDir, d.filename) });
}
const everything = [...tarballs, ...deps].map((t) => t.file).join(' ');
if (values.json) process.stdout.write(`${JSON.stringify({ packages: tarballs, deps })}\n`);
else {
  process.stdout.write(`Packed ${tarballs.length} packages (${version}) into ${out}:\n${tarballs.map((t) => `  ${t.file}  (${t.files} files, ${t.size} bytes)`).join('\n')}\n\n`
    + (deps.length ? `With their dependencies (${deps.map((d) => `${d.name}@${d.version}`).join(', ')}) in ${resolve(out, 'deps')}.\n\n` : '')
    + `Install them before they are published (npm fetches ${deps.length ? 'nothing' : 'ws and @sinclair/typebox from the registry; --with-deps packs those too, for --offline'}):\n  npm install -g ${everything}${deps.length ? ' --offline' : ''}\n\n`
    + `Publish them, in this order (see docs/releasing.md):\n${tarballs.map((t) => `  npm publish ${t.file} --access public`).join('\n')}\n`);
}
