// Who is signed in, and what they may do. On load the console asks GET /auth/whoami with the stored credential
// (an API key or an OIDC access token, kept in sessionStorage for this tab only). With authentication off the
// service answers for everyone as `anonymous` with the admin role and no sign-in is shown. Pages hide or
// disable actions with `can(role)`; the service enforces the same roles (api/auth/roles.ts) whatever the
// console shows. When the identity provider sends the browser back from an OIDC sign-in (oidc.ts), the code is
// exchanged for an access token first, which then serves as the credential; with a refresh token the session
// renews it before it expires (at 80 % of its lifetime) and whenever the service refuses it, and signs out only
// when the issuer refuses the refresh.
import { createContext, type ComponentChildren } from 'preact';
import { useCallback, useContext, useEffect, useState } from 'preact/hooks';
import { ApiError, credential, get, onUnauthorized, setCredential, setCredentialRefresher } from './api';
import { canRefreshOidc, finishOidcSignIn, forgetOidcRefresh, isOidcReturn, refreshOidcToken } from './oidc';

/** The proactive renewal of an OIDC access token, if one is planned. */
let renewal: ReturnType<typeof setTimeout> | undefined;

/** Renews the OIDC access token now: the new token, or undefined when there is none (or the issuer refused). */
async function renewOidcToken(): Promise<string | undefined> {
  const tokens = await refreshOidcToken();
  if (!tokens) return undefined;
  setCredential(tokens.accessToken);
  planRenewal(tokens.expiresIn);
  return tokens.accessToken;
}

/** While this tab holds a refresh token: renew at 80 % of the token's lifetime, and when the service refuses it. */
function planRenewal(expiresIn: number | undefined): void {
  clearTimeout(renewal);
  renewal = undefined;
  if (!canRefreshOidc()) return setCredentialRefresher(undefined);
  setCredentialRefresher(renewOidcToken);
  if (expiresIn !== undefined)
    renewal = setTimeout(() => void renewOidcToken().catch(() => undefined), Math.max(1_000, expiresIn * 800));
}

/** Signed out, or signed in another way: no more renewals. */
function stopRenewal(): void {
  forgetOidcRefresh();
  planRenewal(undefined);
}

export type Role = 'viewer' | 'operator' | 'admin';
const ORDER: Role[] = ['viewer', 'operator', 'admin'];

export interface WhoAmI {
  principal: string;
  role: Role;
  authentication: 'on' | 'off';
}

export interface Session {
  /** undefined while loading; null when signed out. */
  who: WhoAmI | null | undefined;
  /** Why the last sign-in failed, or why the user was signed out. */
  error?: string;
  /** Whether the signed-in user holds at least `role`. */
  can(role: Role): boolean;
  signIn(secret: string): Promise<boolean>;
  signOut(): void;
}

const Ctx = createContext<Session>({
  who: undefined,
  can: () => false,
  signIn: async () => false,
  signOut: () => undefined,
});

const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export const useSession = (): Session => useContext(Ctx);

/** Whether the signed-in user holds at least `role`: `const canCancel = useCan('operator')`. */
export const useCan = (role: Role): boolean => useSession().can(role);

export function SessionProvider({ children }: { children: ComponentChildren }) {
  const [who, setWho] = useState<WhoAmI | null | undefined>(undefined);
  const [error, setError] = useState<string>();

  const load = useCallback(async (): Promise<boolean> => {
    const sent = credential();
    try {
      setWho(await get<WhoAmI>('/auth/whoami'));
      setError(undefined);
      return true;
    } catch (err) {
      setWho(null);
      // The service's reason (an unknown key, an expired token...); none when no credential was sent.
      if (sent || !(err instanceof ApiError) || err.status !== 401) setError(errorMessage(err));
      return false;
    }
  }, []);

  useEffect(() => {
    if (isOidcReturn())
      finishOidcSignIn()
        .then(
          (tokens) => {
            setCredential(tokens.accessToken);
            planRenewal(tokens.expiresIn);
            return load();
          },
          (err: unknown) => {
            setWho(null);
            setError(err instanceof Error ? err.message : String(err));
          },
        )
        // The address changed to the page the sign-in started from: the router reads it again.
        .finally(() => dispatchEvent(new HashChangeEvent('hashchange')));
    else {
      // A reload while signed in through OIDC: renew when the service refuses the token.
      planRenewal(undefined);
      void load();
    }
    return onUnauthorized(() => {
      // A 401 without a credential is only "not signed in yet"; with one, the service stopped accepting it (and
      // no renewal helped).
      if (!credential()) return;
      stopRenewal();
      setCredential(undefined);
      setWho(null);
      setError('signed out: the service no longer accepts the credential');
    });
  }, [load]);

  const session: Session = {
    who,
    error,
    can: (role) => !!who && ORDER.indexOf(who.role) >= ORDER.indexOf(role),
    signIn: async (secret) => {
      stopRenewal();
      setCredential(secret.trim());
      const ok = await load();
      if (!ok) setCredential(undefined);
      return ok;
    },
    signOut: () => {
      stopRenewal();
      setCredential(undefined);
      setError(undefined);
      setWho(null);
    },
  };
  return <Ctx.Provider value={session}>{children}</Ctx.Provider>;
}
