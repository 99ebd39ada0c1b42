#!/usr/bin/env node
/**
 * Installs the optional node-llama-cpp dependency of the embedded llama.cpp
 * model (CODELOOM_LLAMA_MODEL), from the npm registry only, without touching
 * package.json or package-lock.json. Idempotent: exits at once when
 * node-llama-cpp and this platform's binary are already there.
 *
 * Why not `npm install node-llama-cpp`: that pulls every GPU build for the
 * platform as optional dependencies (CUDA, CUDA-ext, Vulkan: 725 MB on
 * linux-x64), and `--omit=optional` at the workspace root would also strip
 * the platform binaries of esbuild and rollup. So node-llama-cpp goes into a
 * private prefix, node_modules/.codeloom-llama, with only the CPU binary, and
 * node_modules/node-llama-cpp links to it (about 85 MB, ~10 s).
 *
 * `npm ci` wipes node_modules and a later `npm install` prunes the link:
 * run this script again after either (CI runs it after `npm ci`).
 *
 * Usage: node scripts/install-llama.mjs [--force] [--verify]
 *   --force   reinstall even when already installed
 *   --verify  also load llama.cpp once (CPU backend) to prove the binary works
 */
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const VERSION = '3.22.1';
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const modules = join(root, 'node_modules');
const prefix = join(modules, '.codeloom-llama');
const link = join(modules, 'node-llama-cpp');
const args = new Set(process.argv.slice(2));

/** The CPU-only (or, on Apple silicon, Metal) prebuilt binary package for this machine. */
function binaryPackage() {
  const names = {
    'linux-x64': 'linux-x64',
    'linux-arm64': 'linux-arm64',
    'linux-arm': 'linux-armv7l',
    'linux-riscv64': 'linux-riscv64',
    'darwin-arm64': 'mac-arm64-metal',
    'darwin-x64': 'mac-x64',
    'win32-x64': 'win-x64',
    'win32-arm64': 'win-arm64',
  };
  const name = names[`${process.platform}-${process.arch}`];
  if (!name) {
    console.error(`install-llama: node-llama-cpp ships no prebuilt binary for ${process.platform}-${process.arch}`);
    process.exit(1);
  }
  return `@node-llama-cpp/${name}`;
}

/** Installed version of node-llama-cpp with its binary beside it, or undefined. */
function installed(binary) {
  try {
    const pkgDir = realpathSync(link);
    const version = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version;
    // node-llama-cpp imports its binary package, so it must resolve from node-llama-cpp's own location.
    const candidates = [join(pkgDir, 'node_modules', binary), join(dirname(pkgDir), binary)];
    return candidates.some((dir) => existsSync(join(dir, 'package.json'))) ? version : undefined;
  } catch {
    return undefined;
  }
}

function run(command, argv, env = {}) {
  const started = Date.now();
  const shell = process.platform === 'win32';
  const result = spawnSync(command, argv, { stdio: 'inherit', env: { ...process.env, ...env }, shell });
  if (result.status !== 0) {
    console.error(`install-llama: \`${command} ${argv.join(' ')}\` failed (exit ${result.status ?? result.signal})`);
    process.exit(1);
  }
  return Date.now() - started;
}

/** Whether the private prefix already holds this version (only the link was pruned by `npm install`). */
function prefixComplete(binary) {
  try {
    const dir = join(prefix, 'node_modules');
    const version = JSON.parse(readFileSync(join(dir, 'node-llama-cpp', 'package.json'), 'utf8')).version;
    return version === VERSION && existsSync(join(dir, binary, 'package.json'));
  } catch {
    return false;
  }
}

function relink() {
  rmSync(link, { force: true }); // only ever our own link: a real directory is refused below
  const target = join(prefix, 'node_modules', 'node-llama-cpp');
  symlinkSync(relative(modules, target), link, process.platform === 'win32' ? 'junction' : 'dir');
}

function install(binary) {
  if (prefixComplete(binary) && !args.has('--force')) {
    relink();
    console.log(`install-llama: relinked node-llama-cpp ${VERSION} from ${relative(root, prefix)}`);
    return;
  }
  mkdirSync(prefix, { recursive: true });
  writeFileSync(join(prefix, 'package.json'), `${JSON.stringify({ name: 'codeloom-llama', private: true }, null, 2)}\n`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const ms = run(
    npm,
    [
      'install', '--prefix', prefix, '--no-save', '--no-package-lock', '--omit=optional', '--ignore-scripts',
      '--no-audit', '--no-fund', '--loglevel=error', `node-llama-cpp@${VERSION}`, `${binary}@${VERSION}`,
    ],
    // Its postinstall (skipped anyway) would otherwise fetch and build llama.cpp from GitHub when no binary fits.
    { NODE_LLAMA_CPP_SKIP_DOWNLOAD: 'true' },
  );
  relink();
  console.log(`install-llama: installed node-llama-cpp ${VERSION} + ${binary} in ${(ms / 1000).toFixed(1)} s (${relative(root, prefix)})`);
}

async function verify() {
  const started = Date.now();
  const { getLlama } = await import(pathToFileURL(join(realpathSync(link), 'dist', 'index.js')).href);
  const llama = await getLlama({ gpu: false, build: 'never', progressLogs: false, logLevel: 'error' });
  console.log(`install-llama: llama.cpp loads (${llama.buildType} binary, ${llama.cpuMathCores} math cores) in ${Date.now() - started} ms`);
  await llama.dispose();
}

function isOurLink() {
  try {
    return lstatSync(link).isSymbolicLink();
  } catch {
    return true; // nothing there yet
  }
}

const binary = binaryPackage();
const version = installed(binary);
if (!isOurLink()) {
  // A real node_modules/node-llama-cpp belongs to npm (someone added it to package.json): leave it alone.
  if (!version) {
    console.error(`install-llama: node_modules/node-llama-cpp is installed without ${binary}: run \`npm install ${binary}@<its version>\``);
    process.exit(1);
  }
  console.log(`install-llama: node-llama-cpp ${version} is installed by npm (package.json); nothing to do`);
} else if (version && !args.has('--force')) {
  console.log(`install-llama: node-llama-cpp ${version} with ${binary} is already installed`);
} else {
  install(binary);
}
if (args.has('--verify')) await verify();
