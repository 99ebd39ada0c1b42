import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** packages/web/dist, from src/ (tests) and dist/ (the built server) alike. */
export const DEFAULT_DASHBOARD_DIR = fileURLToPath(new URL('../../../../web/dist/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.ico': 'image/x-icon', '.map': 'application/json',
};

export interface DashboardAsset { body: Buffer; type: string }

/**
 * The built dashboard, read into memory once at start: index.html and the
 * content-hashed files under assets/ (a few hundred kB). Undefined when the
 * web package has not been built.
 */
export function loadDashboardAssets(dir: string): { index: Buffer; assets: Map<string, DashboardAsset> } | undefined {
  const indexFile = join(dir, 'index.html');
  if (!existsSync(indexFile)) return undefined;
  const assets = new Map<string, DashboardAsset>();
  const assetDir = join(dir, 'assets');
  if (existsSync(assetDir)) {
    for (const name of readdirSync(assetDir)) {
      const file = join(assetDir, name);
      if (!statSync(file).isFile()) continue;
      assets.set(name, { body: readFileSync(file), type: TYPES[extname(name)] ?? 'application/octet-stream' });
    }
  }
  return { index: readFileSync(indexFile), assets };
}

/**
 * Scripts and styles from this origin only (no inline script, no eval);
 * API calls and the streaming WebSocket to this origin; zip downloads are
 * blob: URLs; never framed.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data: blob:", "connect-src 'self'",
  "font-src 'self'", "manifest-src 'self'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
].join('; ');
