// The audit trail's read model, listed by admins (the role table in api/auth/roles.ts), newest first.
import type { Filter } from 'mongodb';
import { z } from 'zod';
import { Collections } from '../../lib/mongo';
import type { ApiDeps } from '../deps';
import { arrayParam, findPage, intParam, parseListQuery } from '../list';
import { PageOf } from '../resources';
import { LIST_QUERY, route } from '../routing';
import type { AuditDoc } from './trail';

export const AuditRecord = z.object({
  auditId: z.string(),
  principal: z
    .string()
    .describe('anonymous (auth off), key:<keyId> or oidc:<subject>; unidentified callers are counted, not recorded'),
  role: z.string().nullable(),
  method: z.string(),
  path: z.string(),
  resourceId: z.string().nullable(),
  status: z.number().int(),
  time: z.number().int().describe('epoch milliseconds'),
});
type AuditRecord = z.infer<typeof AuditRecord>;

const toRecord = ({ _id, ...rest }: AuditDoc): AuditRecord => ({ auditId: _id, ...rest });

const FILTERS = [
  { name: 'principals', description: 'principals, e.g. key:<keyId>', array: true },
  { name: 'methods', description: 'POST, PUT, DELETE, …', array: true },
  { name: 'resourceId', description: 'the id a call was about' },
  { name: 'from', description: 'epoch ms, inclusive' },
  { name: 'to', description: 'epoch ms, exclusive' },
];

export const auditRoutes = (deps: ApiDeps) => [
  route({
    method: 'get',
    path: '/audit',
    role: 'admin',
    tag: 'audit',
    summary: "The audit trail (admin): identified callers' state-changing calls, refused ones included, newest first",
    query: [...LIST_QUERY.filter((q) => q.name !== 'search'), ...FILTERS],
    response: PageOf(AuditRecord),
    errors: [409],
    handler: async ({ query }) => {
      const lq = parseListQuery(query, ['time'], deps.config.MAX_PAGE_SIZE, ['time', -1]);
      const principals = arrayParam(query, 'principals');
      const methods = arrayParam(query, 'methods')?.map((m) => m.toUpperCase());
      const resourceId = typeof query.resourceId === 'string' ? query.resourceId : undefined;
      const from = intParam(query, 'from', 0, 0, Number.MAX_SAFE_INTEGER);
      const to = intParam(query, 'to', Number.MAX_SAFE_INTEGER, 0, Number.MAX_SAFE_INTEGER);
      const filter: Filter<AuditDoc> = {
        time: { $gte: from, $lt: to },
        ...(principals?.length ? { principal: { $in: principals } } : {}),
        ...(methods?.length ? { method: { $in: methods } } : {}),
        ...(resourceId ? { resourceId } : {}),
      };
      return findPage(deps.store.col<AuditDoc>(Collections.audit), filter, lq, toRecord);
    },
  }),
];
