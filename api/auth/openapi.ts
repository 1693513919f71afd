// The OpenAPI document's side of authentication: the two security schemes (API keys, OIDC bearer
// tokens), and on each operation the schemes it accepts, the role its route declares, and its 401/403
// answers.
import { openApiPath, type RouteDef } from '../routing';

const ERROR = { content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };

/** Adds security to a document made by routing.ts's openApiDocument from `routes` (in place; returns it). */
export function withSecurity(doc: Record<string, unknown>, routes: readonly RouteDef[]): Record<string, unknown> {
  const paths = doc.paths as Record<string, Record<string, Record<string, unknown>>>;
  for (const def of routes) {
    const op = paths[openApiPath(def)]?.[def.method];
    if (!op) continue;
    const need = def.role;
    if (need === 'public') {
      op.security = [];
      continue;
    }
    op.security = [{ apiKey: [] }, { bearer: [] }];
    op['x-required-role'] = need;
    op.description = [op.description, `Needs the ${need} role (when AUTH_MODE=on).`].filter(Boolean).join(' ');
    const responses = op.responses as Record<string, unknown>;
    responses[401] = { description: 'No credentials, or an unknown, revoked or expired key or token', ...ERROR };
    responses[403] = { description: `The caller's role is below ${need}`, ...ERROR };
  }
  const components = (doc.components ??= {}) as Record<string, unknown>;
  components.securitySchemes = {
    apiKey: {
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
      description: 'An API key (also accepted as Authorization: Bearer <key>). Admins create them at /auth/keys.',
    },
    bearer: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description: "An OIDC token of OIDC_ISSUER; its role is in the claim OIDC_ROLE_CLAIM (default 'roles').",
    },
  };
  doc.security = [{ apiKey: [] }, { bearer: [] }];
  return doc;
}
