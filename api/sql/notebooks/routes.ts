// SQL notebook endpoints (4.30–4.32): parse, call the service, answer.
import { SqlNotebook, SqlNotebookData } from '../../../domain/sql';
import type { ApiDeps } from '../../deps';
import { IdResponse, PageOf } from '../../resources';
import { LIST_QUERY, route } from '../../routing';
import { createNotebook, deleteNotebook, getNotebook, listNotebooks, updateNotebook } from './service';

export const sqlNotebookRoutes = (deps: ApiDeps) => [
  route({
    method: 'get',
    path: '/sql/notebooks',
    role: 'viewer',
    tag: 'sql',
    summary: 'List SQL notebooks (4.30)',
    query: LIST_QUERY,
    response: PageOf(SqlNotebook),
    errors: [409],
    handler: ({ query }) => listNotebooks(deps, query),
  }),
  route({
    method: 'post',
    path: '/sql/notebooks',
    role: 'operator',
    tag: 'sql',
    summary: 'Create an SQL notebook (4.31); cell ids must be unique within it',
    body: { kind: 'json', schema: SqlNotebookData },
    response: IdResponse('id'),
    errors: [400, 409],
    handler: ({ body }) => createNotebook(deps, body),
  }),
  route({
    method: 'get',
    path: '/sql/notebooks/:sqlNotebookId',
    role: 'viewer',
    tag: 'sql',
    summary: 'Get an SQL notebook',
    response: SqlNotebook,
    errors: [404],
    handler: ({ params }) => getNotebook(deps, params.sqlNotebookId),
  }),
  route({
    method: 'put',
    path: '/sql/notebooks/:sqlNotebookId',
    role: 'operator',
    tag: 'sql',
    summary: 'Update an SQL notebook (4.32): the body replaces its name and cells',
    body: { kind: 'json', schema: SqlNotebookData },
    errors: [400, 404, 409],
    handler: ({ params, body }) => updateNotebook(deps, params.sqlNotebookId, body),
  }),
  route({
    method: 'delete',
    path: '/sql/notebooks/:sqlNotebookId',
    role: 'operator',
    tag: 'sql',
    summary: 'Delete an SQL notebook',
    errors: [404],
    handler: ({ params }) => deleteNotebook(deps, params.sqlNotebookId),
  }),
];
