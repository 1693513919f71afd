// Sign-in when the service has authentication on. When the service names an OIDC issuer and a client id for the
// console (GET /auth/config), a "Sign in with <issuer host>" button runs the authorization-code flow (oidc.ts).
// An API key (issued by an admin, POST /auth/keys) or a pasted access token works always. The credential is
// kept for this browser tab only.
import { useState } from 'preact/hooks';
import { get } from './api';
import { issuerHost, startOidcSignIn, type OidcSettings } from './oidc';
import { useSession } from './session';
import { Button, ErrorBox, errorText, Field, useAsync } from './ui';
import './signin.css';

interface AuthConfig {
  authentication: 'on' | 'off';
  oidc?: OidcSettings;
}

function OidcButton({ oidc }: { oidc: OidcSettings }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  return (
    <div class="signin-oidc">
      <Button
        variant="primary"
        busy={busy}
        onClick={async () => {
          setBusy(true);
          setError(undefined);
          try {
            await startOidcSignIn(oidc);
          } catch (err) {
            setError(errorText(err));
            setBusy(false);
          }
        }}
      >
        Sign in with {issuerHost(oidc.issuer)}
      </Button>
      <ErrorBox error={error} />
    </div>
  );
}

export function SignIn() {
  const session = useSession();
  const config = useAsync((signal) => get<AuthConfig>('/auth/config', undefined, signal), []);
  const [secret, setSecret] = useState('');
  const [busy, setBusy] = useState(false);
  const oidc = config.data?.oidc;
  return (
    <main id="main" class="signin">
      <h1>Sign in</h1>
      <p class="muted">
        This service requires authentication.{' '}
        {oidc
          ? `Sign in through your organisation's identity provider, or use an API key.`
          : `Use an API key, or an access token from your organisation's identity provider (OIDC).`}
      </p>
      <ErrorBox error={session.error} />
      {oidc && <OidcButton oidc={oidc} />}
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
        <Button type="submit" variant={oidc ? 'plain' : 'primary'} busy={busy}>
          Sign in
        </Button>
      </form>
    </main>
  );
}
