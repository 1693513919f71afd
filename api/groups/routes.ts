// Group endpoints (4.1–4.10, except the result stream): parse, call the service, answer.
import { Group, JobInstanceResult } from '../../domain/resources';
import type { ApiDeps } from '../deps';
import { IdResponse, PageOf } from '../resources';
import { LIST_QUERY, route } from '../routing';
import { executeInGroup, listResults, submitToGroup } from './executions';
import { ExecuteBody, GROUP_FILES, GroupCreateForm, GroupUpdateForm } from './schemas';
import { archiveGroup, changeGroupRun, createGroup, deleteGroup, rescaleGroup, updateGroup } from './service';
import { getGroup, getGroupByName, listGroups } from './reads';

/** The group itself: create, read, update, rescale, archive, delete. */
const lifecycleRoutes = (deps: ApiDeps) => [
  route({
    method: 'post',
    path: '/group',
    role: 'operator',
    tag: 'groups',
    summary: 'Create a group of interactive drivers (4.2)',
    body: { kind: 'form', schema: GroupCreateForm, files: GROUP_FILES },
    response: IdResponse('groupId'),
    errors: [400, 402, 404, 409],
    handler: ({ body, files }) => createGroup(deps, body, files),
  }),
  route({
    method: 'get',
    path: '/group',
    role: 'viewer',
    tag: 'groups',
    summary: 'List groups (4.1)',
    query: [
      ...LIST_QUERY,
      { name: 'groupStates', description: 'ACTIVE, ARCHIVED', array: true },
      { name: 'groupKinds', description: 'JOB, CODE', array: true },
      {
        name: 'jobStates',
        description: 'states of the listed jobs of each group (default SUBMITTED, STARTING, READY, BUSY)',
        array: true,
      },
      { name: 'clusterNames', description: 'cluster names', array: true },
      { name: 'tags', description: 'key1=value1;key2=value2' },
    ],
    response: PageOf(Group),
    errors: [409],
    handler: ({ query }) => listGroups(deps, query),
  }),
  route({
    method: 'get',
    path: '/group/name/:groupName',
    role: 'viewer',
    tag: 'groups',
    summary: 'Get a group by name (4.10)',
    response: Group,
    errors: [404],
    handler: ({ params, query }) => getGroupByName(deps, params.groupName, query),
  }),
  route({
    method: 'get',
    path: '/group/:groupId',
    role: 'viewer',
    tag: 'groups',
    summary: 'Get a group by id (4.3)',
    response: Group,
    errors: [404],
    handler: ({ params, query }) => getGroup(deps, params.groupId, query),
  }),
  route({
    method: 'put',
    path: '/group/:groupId',
    role: 'operator',
    tag: 'groups',
    summary: 'Update a group (4.4); Spark settings start new instances, which replace the old once one is READY',
    body: { kind: 'form', schema: GroupUpdateForm, files: GROUP_FILES },
    errors: [400, 402, 404, 409],
    handler: ({ params, body, files }) => updateGroup(deps, params.groupId, body, files),
  }),
  route({
    method: 'post',
    path: '/group/:groupId/rescale/:scale',
    role: 'operator',
    tag: 'groups',
    summary: 'Change the scale of a group (4.8); running executions are not interrupted',
    errors: [402, 404, 409],
    handler: ({ params }) => rescaleGroup(deps, params.groupId, params.scale),
  }),
  route({
    method: 'post',
    path: '/group/:groupId/stop',
    role: 'operator',
    tag: 'groups',
    summary: 'Archive a group: its instances stop and it takes no more executions',
    errors: [404, 409],
    handler: ({ params }) => archiveGroup(deps, params.groupId),
  }),
  route({
    method: 'delete',
    path: '/group/:groupId',
    role: 'operator',
    tag: 'groups',
    summary: 'Delete a group: archive it (stopping its instances), then remove its records',
    errors: [404, 409],
    handler: ({ params }) => deleteGroup(deps, params.groupId),
  }),
];

/** Ilum 1.5.3's pause, resume and restart of a group. */
const runRoutes = (deps: ApiDeps) =>
  (
    [
      ['pause', 'Pause a group: its drivers stop, it keeps its scale, executions answer 409 until it is resumed'],
      ['resume', 'Resume a paused group: its drivers start again'],
      ['restart', 'Restart a group: every driver is replaced, each once its successor is READY'],
    ] as const
  ).map(([action, summary]) =>
    route({
      method: 'post',
      path: `/group/:groupId/${action}`,
      role: 'operator',
      tag: 'groups',
      summary,
      errors: [404, 409],
      handler: ({ params }) => changeGroupRun(deps, params.groupId, action),
    }),
  );

/** Executions in a group and their results. */
const executionRoutes = (deps: ApiDeps) => [
  route({
    method: 'post',
    path: '/group/:groupId/job/execute',
    role: 'operator',
    tag: 'groups',
    summary: 'Execute a job class (or code) in a group and wait for its result (4.5)',
    body: { kind: 'json', schema: ExecuteBody },
    response: JobInstanceResult,
    errors: [400, 404, 409],
    handler: ({ params, body }) => executeInGroup(deps, params.groupId, body),
  }),
  route({
    method: 'post',
    path: '/group/:groupId/job/submit',
    role: 'operator',
    tag: 'groups',
    summary: 'Submit a job class (or code) to a group without waiting (4.7); the result comes on the result stream',
    body: { kind: 'json', schema: ExecuteBody },
    response: IdResponse('jobInstanceId'),
    errors: [400, 404, 409],
    handler: ({ params, body }) => submitToGroup(deps, params.groupId, body),
  }),
  route({
    method: 'get',
    path: '/group/:groupId/job/result',
    role: 'viewer',
    tag: 'groups',
    summary: 'List job instance results of a group (4.6)',
    query: LIST_QUERY,
    response: PageOf(JobInstanceResult),
    errors: [404, 409],
    handler: ({ params, query }) => listResults(deps, params.groupId, query),
  }),
];

export const groupRoutes = (deps: ApiDeps) => [...lifecycleRoutes(deps), ...runRoutes(deps), ...executionRoutes(deps)];
