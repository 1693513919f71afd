// SQL engine endpoints (4.25, engine list and shutdown): parse, call the service, answer.
import { z } from 'zod';
import { SqlEngineCreation, SqlEngineInfo } from '../../../domain/sql';
import type { ApiDeps } from '../../deps';
import { route } from '../../routing';
import { createEngine, deleteEngine, listEngines } from './service';

export const sqlEngineRoutes = (deps: ApiDeps) => [
  route({
    method: 'post',
    path: '/sql/engine/:clusterId',
    role: 'operator',
    tag: 'sql',
    summary:
      'Create (start) the SQL engine of a type on a cluster (4.25); waits until it runs unless async; force replaces a starting one',
    body: { kind: 'json', schema: SqlEngineCreation, optional: true },
    response: z.object({ id: z.string() }),
    errors: [400, 404, 409],
    handler: ({ params, body }) => createEngine(deps, params.clusterId, body),
  }),
  route({
    method: 'get',
    path: '/sql/engine/:clusterId',
    role: 'viewer',
    tag: 'sql',
    summary: 'List the SQL engines of a cluster (state RUNNING, STARTING or FAILED)',
    response: z.array(SqlEngineInfo),
    errors: [404, 409],
    handler: ({ params }) => listEngines(deps, params.clusterId),
  }),
  route({
    method: 'delete',
    path: '/sql/engine/:sqlEngineId',
    role: 'operator',
    tag: 'sql',
    summary: 'Shut an SQL engine down; returns once it is stopped',
    errors: [404, 409],
    handler: ({ params }) => deleteEngine(deps, params.sqlEngineId),
  }),
];
