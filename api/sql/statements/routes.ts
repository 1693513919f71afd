// Saved statement endpoints (4.27–4.29): parse, call the service, answer.
import { SqlSaved, SqlSavedData } from '../../../domain/sql';
import type { ApiDeps } from '../../deps';
import { IdResponse, PageOf } from '../../resources';
import { LIST_QUERY, route } from '../../routing';
import {
  createSavedStatement,
  deleteSavedStatement,
  getSavedStatement,
  listSavedStatements,
  updateSavedStatement,
} from './service';

export const sqlStatementRoutes = (deps: ApiDeps) => [
  route({
    method: 'get',
    path: '/sql/statement',
    role: 'viewer',
    tag: 'sql',
    summary: 'List saved SQL statements (4.27)',
    query: LIST_QUERY,
    response: PageOf(SqlSaved),
    errors: [409],
    handler: ({ query }) => listSavedStatements(deps, query),
  }),
  route({
    method: 'post',
    path: '/sql/statement',
    role: 'operator',
    tag: 'sql',
    summary: 'Save an SQL statement (4.28); names need not be unique',
    body: { kind: 'json', schema: SqlSavedData },
    response: IdResponse('id'),
    errors: [400, 409],
    handler: ({ body }) => createSavedStatement(deps, body),
  }),
  route({
    method: 'get',
    path: '/sql/statement/:sqlSavedId',
    role: 'viewer',
    tag: 'sql',
    summary: 'Get a saved SQL statement',
    response: SqlSaved,
    errors: [404],
    handler: ({ params }) => getSavedStatement(deps, params.sqlSavedId),
  }),
  route({
    method: 'put',
    path: '/sql/statement/:sqlSavedId',
    role: 'operator',
    tag: 'sql',
    summary: 'Update a saved SQL statement (4.29): the body replaces the stored statement',
    body: { kind: 'json', schema: SqlSavedData },
    errors: [400, 404, 409],
    handler: ({ params, body }) => updateSavedStatement(deps, params.sqlSavedId, body),
  }),
  route({
    method: 'delete',
    path: '/sql/statement/:sqlSavedId',
    role: 'operator',
    tag: 'sql',
    summary: 'Delete a saved SQL statement',
    errors: [404],
    handler: ({ params }) => deleteSavedStatement(deps, params.sqlSavedId),
  }),
];
