import { useEffect, useState } from 'preact/hooks';

/** Path routing under /dashboard with the History API; the server answers index.html for every such path. */
export const BASE = '/dashboard';
const listeners = new Set<() => void>();
let landing = '/playground';
/** Where the page goes once signed in (sign-up: API keys; sign-in: the playground). */
export const setLanding = (path: string) => { landing = path; };
export const getLanding = () => landing;

export const currentPath = () => location.pathname.replace(/^\/dashboard\/?/, '/').replace(/\/+$/, '') || '/';

export function navigate(path: string, replace = false) {
  const url = `${BASE}${path === '/' ? '/' : path}`;
  if (replace) history.replaceState(null, '', url); else history.pushState(null, '', url);
  for (const fn of listeners) fn();
}

addEventListener('popstate', () => { for (const fn of listeners) fn(); });

export function usePath(): string {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const fn = () => setPath(currentPath());
    listeners.add(fn);
    return () => { listeners.delete(fn); };
  }, []);
  return path;
}

/** Same-page navigation for plain links (modified clicks still open new tabs). */
export function onLinkClick(event: MouseEvent) {
  const a = (event.target as Element | null)?.closest?.('a');
  if (!a || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const href = a.getAttribute('href');
  if (!href || !href.startsWith(`${BASE}/`) || a.hasAttribute('download') || a.target) return;
  event.preventDefault();
  navigate(href.slice(BASE.length) || '/');
}
