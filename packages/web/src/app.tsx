import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useSession } from './hooks.js';
import { getLanding, navigate, onLinkClick, usePath } from './router.js';
import { messageOf, restore, setEnvironment, signOut, type Environment } from './session.js';
import { AuthPage } from './pages/auth.js';
import { KeysPage } from './pages/keys.js';
import { PlaygroundPage } from './pages/playground.js';
import { UsagePage } from './pages/usage.js';
import { ProjectsPage } from './pages/projects.js';
import { WorkflowsPage } from './pages/workflows.js';
import { OAuthAppsPage } from './pages/oauth-apps.js';
import { AccountPage } from './pages/account.js';
import { ForgotPasswordPage, ResetPasswordPage } from './pages/password.js';
import { BudgetsPage } from './pages/budgets.js';
import { WebhooksPage } from './pages/webhooks.js';
import { LogsPage } from './pages/logs.js';
import { ModelsPage } from './pages/models.js';

const NAV: [path: string, label: string][] = [
  ['/playground', 'Playground'], ['/models', 'Models'], ['/keys', 'API keys'], ['/usage', 'Usage'], ['/logs', 'Logs'], ['/budgets', 'Budgets'], ['/webhooks', 'Webhooks'], ['/projects', 'Projects'],
  ['/workflows', 'Workflows'], ['/oauth-apps', 'OAuth apps'], ['/account', 'Account'],
];
const PUBLIC = new Set(['/sign-in', '/sign-up', '/forgot-password', '/reset-password']);
/** Reached from an emailed link, signed in or not. */
const EITHER = new Set(['/reset-password']);

/** The pages of someone signed out. */
function publicPage(path: string): ComponentChildren {
  if (path === '/forgot-password') return <ForgotPasswordPage />;
  if (path === '/reset-password') return <ResetPasswordPage />;
  return <AuthPage mode={path === '/sign-up' ? 'sign-up' : 'sign-in'} />;
}

function page(path: string): ComponentChildren {
  const [, first, id] = path.split('/');
  switch (`/${first}`) {
    case '/playground': return <PlaygroundPage />;
    case '/models': return <ModelsPage />;
    case '/keys': return <KeysPage />;
    case '/usage': return <UsagePage />;
    case '/logs': return <LogsPage />;
    case '/budgets': return <BudgetsPage />;
    case '/webhooks': return <WebhooksPage />;
    case '/projects': return <ProjectsPage projectId={id} />;
    case '/workflows': return <WorkflowsPage />;
    case '/runs': return <WorkflowsPage runId={id} />;
    case '/oauth-apps': return <OAuthAppsPage />;
    case '/account': return <AccountPage />;
    default: return <NotFound />;
  }
}

function NotFound() {
  return <><h1 tabIndex={-1}>Page not found</h1><p><a href="/dashboard/playground">Go to the playground</a></p></>;
}

function EnvironmentSwitch({ value }: { value: Environment }) {
  return (
    <fieldset class="env-switch" data-env={value}>
      <legend>Environment</legend>
      {(['production', 'sandbox'] as const).map((env) => (
        <label key={env}>
          <input type="radio" name="environment" value={env} checked={value === env} onChange={() => setEnvironment(env)} />
          {env === 'production' ? 'Production' : 'Sandbox'}
        </label>
      ))}
    </fieldset>
  );
}

export function App() {
  const session = useSession();
  const path = usePath();
  const [ready, setReady] = useState(false);
  const [bootError, setBootError] = useState<string | null>(null);
  const mainRef = useRef<HTMLElement>(null);

  useEffect(() => {
    restore().then(() => setReady(true), (e) => { setBootError(messageOf(e)); setReady(true); });
  }, []);

  const signedIn = session.user !== null;
  useEffect(() => {
    if (!ready) return;
    if (!signedIn && !PUBLIC.has(path)) navigate('/sign-in', true);
    else if (signedIn && ((PUBLIC.has(path) && !EITHER.has(path)) || path === '/')) navigate(getLanding(), true);
  }, [ready, signedIn, path]);

  // A new page: its heading gets focus (screen readers announce it; Tab starts from there) and the title follows.
  useEffect(() => {
    const h1 = mainRef.current?.querySelector('h1');
    document.title = `${h1?.textContent ?? 'Dashboard'} · Codeloom`;
    h1?.focus();
  }, [path, ready, signedIn]);

  if (!ready) return <main class="boot" ref={mainRef}><p>Loading…</p></main>;
  const current = NAV.find(([p]) => path === p || path.startsWith(`${p}/`) || (p === '/workflows' && path.startsWith('/runs')))?.[0];

  return (
    <div class="shell" onClick={(e) => onLinkClick(e as unknown as MouseEvent)}>
      <a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <a class="brand" href="/dashboard/playground"><span aria-hidden="true">◆ </span>Codeloom</a>
        {signedIn && <EnvironmentSwitch value={session.environment} />}
        {signedIn && (
          <div class="who">
            <span class="muted">{session.user!.email}</span>
            <button type="button" class="secondary" onClick={() => signOut().then(() => navigate('/sign-in', true), (e) => setBootError(messageOf(e)))}>Sign out</button>
          </div>
        )}
      </header>
      {signedIn && (
        <nav class="main-nav" aria-label="Dashboard">
          <ul>
            {NAV.map(([p, label]) => (
              <li key={p}><a href={`/dashboard${p}`} aria-current={current === p ? 'page' : undefined}>{label}</a></li>
            ))}
          </ul>
        </nav>
      )}
      <main id="main" ref={mainRef} data-env={session.environment}>
        {bootError && <p class="error" role="alert">{bootError}</p>}
        {signedIn ? (EITHER.has(path) ? publicPage(path) : PUBLIC.has(path) || path === '/' ? null : page(path)) : publicPage(path)}
      </main>
    </div>
  );
}
