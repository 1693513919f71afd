// API key endpoints (admin only, by the role table in roles.ts) and "who am I" (any role).
import type { Context } from 'koa';
import { z } from 'zod';
import type { ApiDeps } from '../deps';
import { parseListQuery } from '../list';
import { PageOf } from '../resources';
import { LIST_QUERY, route } from '../routing';
import { ANONYMOUS, authenticatorOf, type Principal } from './authenticate';
import { ApiKey, createKey, CreatedApiKey, getKey, listKeys, NewApiKey, revokeKey } from './keys';
import { ROLES } from './roles';

export const principalOf = (ctx: Context): Principal => (ctx.state.principal as Principal | undefined) ?? ANONYMOUS;

const WhoAmI = z.object({
  principal: z.string(),
  role: z.enum(ROLES as [string, ...string[]]),
  authentication: z.enum(['on', 'off']),
});

/** What a client needs to know before signing in; public, and nothing in it is a secret. */
const AuthConfig = z.object({
  authentication: z.enum(['on', 'off']),
  oidc: z
    .object({
      issuer: z.string().meta({ description: 'OIDC_ISSUER: discovery at <issuer>/.well-known/openid-configuration' }),
      clientId: z.string().meta({ description: 'OIDC_CONSOLE_CLIENT_ID: public client (authorization code + PKCE)' }),
    })
    .optional()
    .meta({ description: 'present when authentication is on and the console may sign in through the issuer' }),
});

export const authRoutes = (deps: ApiDeps) => [
  route({
    method: 'get',
    path: '/auth/config',
    role: 'public',
    tag: 'auth',
    summary: 'How to sign in: whether authentication is on, and the OIDC issuer and client id of the console',
    response: AuthConfig,
    handler: async () => {
      const { OIDC_ISSUER: issuer, OIDC_CONSOLE_CLIENT_ID: clientId } = deps.config;
      const on = authenticatorOf(deps).enabled;
      return { authentication: on ? 'on' : 'off', ...(on && issuer && clientId ? { oidc: { issuer, clientId } } : {}) };
    },
  }),
  route({
    method: 'get',
    path: '/auth/whoami',
    role: 'viewer',
    tag: 'auth',
    summary: 'The caller: its principal and role',
    response: WhoAmI,
    handler: async ({ ctx }) => {
      const who = principalOf(ctx);
      return { principal: who.id, role: who.role, authentication: authenticatorOf(deps).enabled ? 'on' : 'off' };
    },
  }),
  route({
    method: 'post',
    path: '/auth/keys',
    role: 'admin',
    tag: 'auth',
    summary: 'Create an API key (admin); the key is in this answer only',
    body: { kind: 'json', schema: NewApiKey },
    response: CreatedApiKey,
    errors: [400, 409],
    handler: ({ body, ctx }) => createKey(deps.store, body, principalOf(ctx).id),
  }),
  route({
    method: 'get',
    path: '/auth/keys',
    role: 'admin',
    tag: 'auth',
    summary: 'List API keys (admin), newest first; never their secrets',
    query: [...LIST_QUERY, { name: 'revoked', description: 'true: revoked keys too (default false)' }],
    response: PageOf(ApiKey),
    errors: [409],
    handler: ({ query }) =>
      listKeys(
        deps.store,
        parseListQuery(query, ['createdTime', 'name'], deps.config.MAX_PAGE_SIZE, ['createdTime', -1]),
        query.revoked === 'true',
      ),
  }),
  route({
    method: 'get',
    path: '/auth/keys/:keyId',
    role: 'admin',
    tag: 'auth',
    summary: 'Get an API key (admin)',
    response: ApiKey,
    errors: [404],
    handler: ({ params }) => getKey(deps.store, params.keyId),
  }),
  route({
    method: 'delete',
    path: '/auth/keys/:keyId',
    role: 'admin',
    tag: 'auth',
    summary: 'Revoke an API key (admin): requests with it answer 401 from now on',
    response: ApiKey,
    errors: [404],
    handler: ({ params, ctx }) => revokeKey(deps.store, params.keyId, principalOf(ctx).id),
  }),
];
