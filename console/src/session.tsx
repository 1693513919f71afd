// Who is signed in, and what they may do. On load the console asks GET /auth/whoami with the stored credential
// (an API key or an OIDC access token, kept in sessionStorage for this tab only). With authentication off the
// service answers for everyone as `anonymous` with the admin role and no sign-in is shown. Pages hide or
// disable actions with `can(role)`; the service enforces the same roles (api/auth/roles.ts) whatever the
// console shows. When the identity provider sends the browser back from an OIDC sign-in (oidc.ts), the code is
// exchanged for an access token first, which then serves as the credential.
import { createContext, type ComponentChildren } from 'preact';
import { useCallback, useContext, useEffect, useState } from 'preact/hooks';
import { ApiError, credential, get, onUnauthorized, setCredential } from './api';
import { finishOidcSignIn, isOidcReturn } from './oidc';

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
          (token) => {
            setCredential(token);
            return load();
          },
          (err: unknown) => {
            setWho(null);
            setError(err instanceof Error ? err.message : String(err));
          },
        )
        // The address changed to the page the sign-in started from: the router reads it again.
        .finally(() => dispatchEvent(new HashChangeEvent('hashchange')));
    else void load();
    return onUnauthorized(() => {
      // A 401 without a credential is only "not signed in yet"; with one, the service stopped accepting it.
      if (!credential()) return;
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
      setCredential(secret.trim());
      const ok = await load();
      if (!ok) setCredential(undefined);
      return ok;
    },
    signOut: () => {
      setCredential(undefined);
      setError(undefined);
      setWho(null);
    },
  };
  return <Ctx.Provider value={session}>{children}</Ctx.Provider>;
}
