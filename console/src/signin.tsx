// Sign-in when the service has authentication on: an API key (issued by an admin, POST /auth/keys) or an OIDC
// access token pasted from the identity provider. The credential is kept for this browser tab only.
import { useState } from 'preact/hooks';
import { useSession } from './session';
import { Button, ErrorBox, Field } from './ui';

export function SignIn() {
  const session = useSession();
  const [secret, setSecret] = useState('');
  const [busy, setBusy] = useState(false);
  return (
    <main id="main" class="signin">
      <h1>Sign in</h1>
      <p class="muted">
        This service requires authentication. Use an API key, or an access token from your organisation's identity
        provider (OIDC).
      </p>
      <ErrorBox error={session.error} />
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          await session.signIn(secret);
          setBusy(false);
        }}
      >
        <Field label="API key or access token">
          <input
            name="credential"
            type="password"
            autoComplete="off"
            required
            value={secret}
            onInput={(e) => setSecret(e.currentTarget.value)}
          />
        </Field>
        <Button type="submit" variant="primary" busy={busy}>
          Sign in
        </Button>
      </form>
    </main>
  );
}
