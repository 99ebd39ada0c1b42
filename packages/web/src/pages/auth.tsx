import { useState } from 'preact/hooks';
import { ErrorText } from '../components/ui.js';
import { setLanding } from '../router.js';
import { messageOf, signIn, signUp } from '../session.js';

/** Back from the reset page (`?password=reset`). */
const passwordWasReset = () => new URLSearchParams(location.search).get('password') === 'reset';

/** Sign in and sign up: one form each, with a link between them (and from sign-in to the password reset). */
export function AuthPage({ mode }: { mode: 'sign-in' | 'sign-up' }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const signingUp = mode === 'sign-up';
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
      {!signingUp && <p><a href="/dashboard/forgot-password">Forgot password?</a></p>}
      <p>
        {signingUp ? <>Have an account? <a href="/dashboard/sign-in">Sign in instead</a></> : <>New here? <a href="/dashboard/sign-up">Create an account</a></>}
      </p>
    </div>
  );
}
