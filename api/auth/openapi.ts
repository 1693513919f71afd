// The OpenAPI document's side of authentication: the two security schemes (API keys, OIDC bearer
// tokens), and on each operation the schemes it accepts, the role it needs, and its 401/403 answers.
import { API_PREFIX } from '../routing';
import type { RoleFor } from './roles';

const ERROR = { content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };

/** Adds security to a document made by routing.ts's openApiDocument (in place; returns it). */
export function withSecurity(doc: Record<string, unknown>, roleFor: RoleFor): Record<string, unknown> {
  const paths = doc.paths as Record<string, Record<string, Record<string, unknown>>>;
  for (const [p, ops] of Object.entries(paths)) {
    // `/api/v1/job/{jobId}` → `/job/jobId`: the role table looks at fixed segments only.
    const path = p.slice(API_PREFIX.length).replace(/\{([^}]+)\}/g, '$1');
    for (const [method, op] of Object.entries(ops)) {
      const need = roleFor(method.toUpperCase(), path);
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
