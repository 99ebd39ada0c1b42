import { useEffect, useState } from 'preact/hooks';
import { ErrorText } from '../components/ui.js';
import { setLanding } from '../router.js';
import { messageOf, publicConfig, signIn, signUp, type PublicConfig } from '../session.js';

/** Why this server takes no sign-up now (CODELOOM_SIGNUP), or null when it may (the first account always may). */
export function signupRefusal(config: PublicConfig | null): string | null {
  if (!config || config.first_account) return null;
  if (config.signup === 'closed') return 'Sign-up is closed on this server. Ask an administrator for an account.';
  if (config.signup === 'invite') return 'Sign-up on this server is by invitation only. Ask an administrator for an invitation.';
  return null;
}

/** Back from the reset page (`?password=reset`). */
const passwordWasReset = () => new URLSearchParams(location.search).get('password') === 'reset';

/** Sign in and sign up: one form each, with a link between them (and from sign-in to the password reset). */
export function AuthPage({ mode }: { mode: 'sign-in' | 'sign-up' }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [config, setConfig] = useState<PublicConfig | null>(null);
  useEffect(() => { void publicConfig().then(setConfig); }, []);
  const signingUp = mode === 'sign-up';
  const refusal = signupRefusal(config);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const field = (k: string) => String(form.get(k) ?? '');
    setBusy(true);
    setError(null);
    try {
      setLanding(signingUp ? '/keys' : '/playground');
      if (signingUp) await signUp(field('name'), field('email'), field('password'));
      else await signIn(field('email'), field('password'));
    } catch (e) {
      setError(messageOf(e));
      setBusy(false);
    }
  };
  return (
    <div class="auth">
      <h1 tabIndex={-1}>{signingUp ? 'Create your Codeloom account' : 'Sign in to Codeloom'}</h1>
      {!signingUp && passwordWasReset() && <p role="status" class="success">Your password was changed and every session signed out. Sign in with the new password.</p>}
      {signingUp && config?.first_account && config.signup !== 'open' && <p class="muted">This server has no account yet: the first one can be created here, then sign-up is {config.signup === 'domains' ? 'limited to the allowed domains' : config.signup === 'invite' ? 'by invitation only' : 'closed'}.</p>}
      {signingUp && refusal ? <p role="status" class="notice">{refusal}</p> : (
      <form onSubmit={submit} class="stack" key={mode}>
        {signingUp && (
          <label>Name<input name="name" autoComplete="name" required maxLength={100} /></label>
        )}
        <label>Email<input name="email" type="email" autoComplete="email" required maxLength={254} /></label>
        <label>Password<input name="password" type="password" autoComplete={signingUp ? 'new-password' : 'current-password'} required minLength={signingUp ? 8 : 1} maxLength={256} aria-describedby={signingUp ? 'pw-hint' : undefined} /></label>
        {signingUp && <p id="pw-hint" class="muted">At least 8 characters.</p>}
        <ErrorText message={error} />
        <button type="submit" disabled={busy}>{signingUp ? 'Create account' : 'Sign in'}</button>
      </form>
      )}
      {!signingUp && config && (config.password_reset_by_mail
        ? <p><a href="/dashboard/forgot-password">Forgot password?</a></p>
        : <p class="muted">Forgot your password? Ask an administrator to reset it.</p>)}
      {signingUp ? <p>Have an account? <a href="/dashboard/sign-in">Sign in instead</a></p>
        : config && !refusal && <p>New here? <a href="/dashboard/sign-up">Create an account</a></p>}
    </div>
  );
}
