import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { AppError } from '../../errors.js';
import { DASHBOARD_CSP, DEFAULT_DASHBOARD_DIR, loadDashboardAssets } from './dashboard-assets.js';
import { dashboardSessionRoutes, type DashboardDeps } from './dashboard-session-routes.js';

export const DASHBOARD_PATH = '/dashboard';
const hidden = { hide: true };
// Static files are not counted against the per-address request limit: one page load fetches several.
const staticConfig = { rateLimit: false };

/**
 * The account dashboard (packages/web): `/` redirects to it, `/dashboard`
 * and every path under it answer index.html (the page routes itself), and
 * `/dashboard/assets/…` the content-hashed scripts and styles, cached for
 * good. Off with CODELOOM_DASHBOARD=false.
 */
export const dashboardRoutes = (deps: DashboardDeps, dir = DEFAULT_DASHBOARD_DIR): FastifyPluginAsync => async (app) => {
  const built = loadDashboardAssets(dir);
  if (!built) app.log.warn({ dir }, 'the dashboard is not built (npm run build:web); /dashboard answers 503');

  const sendIndex = (reply: FastifyReply) => {
    if (!built) throw new AppError('service_unavailable', 'The dashboard is not built: run `npm run build:web` (npm start does it).');
    return reply.headers({
      'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', 'content-security-policy': DASHBOARD_CSP,
      'x-frame-options': 'DENY', 'x-content-type-options': 'nosniff', 'referrer-policy': 'same-origin',
    }).send(built.index);
  };

  app.get('/', { config: staticConfig, schema: hidden }, async (_request, reply) => reply.redirect(`${DASHBOARD_PATH}/`, 302));
  app.get(DASHBOARD_PATH, { config: staticConfig, schema: hidden }, async (_request, reply) => sendIndex(reply));
  app.get(`${DASHBOARD_PATH}/*`, { config: staticConfig, schema: hidden }, async (_request, reply) => sendIndex(reply));
  app.get(`${DASHBOARD_PATH}/assets/:name`, { config: staticConfig, schema: hidden }, async (request, reply) => {
    const asset = built?.assets.get((request.params as { name: string }).name);
    if (!asset) throw new AppError('not_found', 'No such dashboard file.');
    return reply.headers({ 'content-type': asset.type, 'cache-control': 'public, max-age=31536000, immutable', 'x-content-type-options': 'nosniff' }).send(asset.body);
  });
  await app.register(dashboardSessionRoutes(deps, `${DASHBOARD_PATH}/session`));
};
