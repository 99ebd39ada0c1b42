// Builds the dashboard into dist/: index.html plus content-hashed assets (no CDN, no inline script).
//   node packages/web/build.mjs          build
//   buildWeb() / webBuildNeeded()        from scripts/build-if-needed.mjs and tests
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const srcDir = join(here, 'src');
export const distDir = join(here, 'dist');
const stamp = join(distDir, 'index.html');

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** True when dist/ is missing or older than a source file (the web sources, the client SDK, or this script). */
export function webBuildNeeded() {
  if (!existsSync(stamp)) return true;
  const built = statSync(stamp).mtimeMs;
  const inputs = [newestMtime(srcDir), newestMtime(join(here, '../client/src')), statSync(fileURLToPath(import.meta.url)).mtimeMs];
  return inputs.some((m) => m > built);
}

export async function buildWeb({ quiet = false } = {}) {
  const esbuild = await import('esbuild');
  rmSync(distDir, { recursive: true, force: true });
  mkdirSync(join(distDir, 'assets'), { recursive: true });
  const result = await esbuild.build({
    entryPoints: { app: join(srcDir, 'main.tsx') },
    bundle: true,
    format: 'esm',
    splitting: false,
    minify: true,
    sourcemap: 'linked',
    target: ['es2022'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: join(distDir, 'assets'),
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    metafile: true,
    legalComments: 'none',
    logLevel: quiet ? 'error' : 'warning',
    // The SDK from source, so the dashboard never needs the client's tsc build.
    alias: { '@codeloom/client': fileURLToPath(new URL('../client/src/index.ts', import.meta.url)) },
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
  const js = outputs.find((f) => f.endsWith('.js'));
  const css = outputs.find((f) => f.endsWith('.css'));
  writeFileSync(stamp, `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Codeloom dashboard</title>
${css ? `<link rel="stylesheet" href="/dashboard/assets/${css}">\n` : ''}<script type="module" src="/dashboard/assets/${js}"></script>
</head>
<body>
<div id="app"><p class="boot">Loading the Codeloom dashboard…</p></div>
<noscript>The Codeloom dashboard needs JavaScript. The API works without it: see /docs.</noscript>
</body>
</html>
`);
  if (!quiet) console.error(`built the dashboard: ${outputs.filter((f) => !f.endsWith('.map')).join(', ')}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (!process.argv.includes('--if-needed') || webBuildNeeded()) await buildWeb();
}
