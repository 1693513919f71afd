// Safe defaults, checked before the API listens: without authentication it may only bind a loopback
// address (a Spark job is code: whoever reaches the port could run it on the clusters), and with
// authentication someone must be able to call it (an admin key or an OIDC issuer).
import { isIP } from 'node:net';
import { OIDC_AUDIENCE_REQUIRED, type Config } from '../../lib/config';
import type { Store } from '../../lib/mongo';
import { ensureBootstrapKey, hasLiveAdminKey } from './keys';
import { parseRoleMap } from './oidc';

/** localhost, 127.0.0.0/8, ::1 (also as ::ffff:127.x.y.z). */
export function isLoopback(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h === '::1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice(7) : h;
  return isIP(v4) === 4 && v4.startsWith('127.');
}

/** Throws, saying why and what to set, when the API must not start. Stores the bootstrap key. */
export async function checkAuthSetup(
  config: Pick<Config, 'AUTH_MODE' | 'AUTH_ADMIN_KEY' | 'OIDC_ISSUER' | 'OIDC_AUDIENCE' | 'OIDC_ROLE_MAP'>,
  store: Store,
  host: string,
): Promise<void> {
  // loadConfig refuses it too; this covers a configuration built in code.
  if (config.OIDC_ISSUER && !config.OIDC_AUDIENCE) throw new Error(OIDC_AUDIENCE_REQUIRED);
  if (config.AUTH_MODE === 'off') {
    if (isLoopback(host)) return;
    throw new Error(
      `refusing to listen on ${host} without authentication: anyone who reaches that address could run code ` +
        'on the clusters. Set AUTH_MODE=on with AUTH_ADMIN_KEY and/or OIDC_ISSUER, or API_HOST=127.0.0.1.',
    );
  }
  parseRoleMap(config.OIDC_ROLE_MAP);
  await ensureBootstrapKey(store, config);
  if (!config.OIDC_ISSUER && !(await hasLiveAdminKey(store))) {
    throw new Error(
      'AUTH_MODE=on but no one could call the API: there is no OIDC_ISSUER and no live admin API key. ' +
        'Set AUTH_ADMIN_KEY (at least 32 characters) to a new value, or set OIDC_ISSUER.',
    );
  }
}
