// Schedule endpoints (4.11–4.15): parse, call the service, answer.
import { Schedule } from '../../domain/resources';
import type { ApiDeps } from '../deps';
import { IdResponse, PageOf } from '../resources';
import { LIST_QUERY, route } from '../routing';
import { SCHEDULE_FILES, ScheduleCreateForm, ScheduleDetail, ScheduleUpdateForm } from './schemas';
import {
  changeScheduleState,
  createSchedule,
  deleteSchedule,
  getSchedule,
  getScheduleByName,
  listSchedules,
  updateSchedule,
  type ScheduleAction,
} from './service';

const stateAction = (deps: ApiDeps, action: ScheduleAction, summary: string, pathAction: string = action) =>
  route({
    method: 'post',
    path: `/schedule/:scheduleId/${pathAction}`,
    role: 'operator',
    tag: 'schedules',
    summary,
    errors: [404, 409],
    handler: ({ params }) => changeScheduleState(deps, params.scheduleId, action),
  });

export const scheduleRoutes = (deps: ApiDeps) => [
  route({
    method: 'post',
    path: '/schedule',
    role: 'operator',
    tag: 'schedules',
    summary: 'Create a schedule (4.12): a Temporal Schedule whose runs are single jobs',
    body: { kind: 'form', schema: ScheduleCreateForm, files: SCHEDULE_FILES },
    response: IdResponse('scheduleId'),
    errors: [400, 402, 404, 409],
    handler: ({ body, files }) => createSchedule(deps, body, files),
  }),
  route({
    method: 'get',
    path: '/schedule',
    role: 'viewer',
    tag: 'schedules',
    summary: 'List schedules (4.11)',
    query: [
      ...LIST_QUERY,
      { name: 'scheduleStates', description: 'ENABLED, DISABLED, PAUSED (default ENABLED)', array: true },
      { name: 'scheduleCrons', description: 'cron expressions', array: true },
      {
        name: 'jobStates',
        description: 'states of the listed jobs of each schedule (default SUBMITTED, STARTING, READY, BUSY)',
        array: true,
      },
      { name: 'clusterNames', description: 'cluster names', array: true },
      { name: 'tags', description: 'key1=value1;key2=value2' },
    ],
    response: PageOf(Schedule),
    errors: [409],
    handler: ({ query }) => listSchedules(deps, query),
  }),
  route({
    method: 'get',
    path: '/schedule/name/:scheduleName',
    role: 'viewer',
    tag: 'schedules',
    summary: 'Get a schedule by name (4.15); jobs: its 20 newest',
    response: Schedule,
    errors: [404],
    handler: ({ params }) => getScheduleByName(deps, params.scheduleName),
  }),
  route({
    method: 'get',
    path: '/schedule/:scheduleId',
    role: 'viewer',
    tag: 'schedules',
    summary: 'Get a schedule by id (4.13); jobs: its 20 newest; nextRunTimes: its next runs while ENABLED',
    response: ScheduleDetail,
    errors: [404],
    handler: ({ params }) => getSchedule(deps, params.scheduleId),
  }),
  route({
    method: 'put',
    path: '/schedule/:scheduleId',
    role: 'operator',
    tag: 'schedules',
    summary: 'Update a schedule (4.14); changes apply from the next run',
    body: { kind: 'form', schema: ScheduleUpdateForm, files: SCHEDULE_FILES },
    errors: [400, 402, 404, 409],
    handler: ({ params, body, files }) => updateSchedule(deps, params.scheduleId, body, files),
  }),
  stateAction(deps, 'pause', 'Pause a schedule: no runs until it is resumed'),
  stateAction(deps, 'resume', 'Resume a paused or disabled schedule'),
  stateAction(deps, 'disable', 'Disable a schedule: no more runs (state DISABLED)'),
  // Ilum 1.5.3's name for the same.
  stateAction(deps, 'disable', 'Stop a schedule (state DISABLED), the same as /disable', 'stop'),
  route({
    method: 'delete',
    path: '/schedule/:scheduleId',
    role: 'operator',
    tag: 'schedules',
    summary: 'Delete a schedule; the jobs it created stay',
    errors: [404, 409],
    handler: ({ params }) => deleteSchedule(deps, params.scheduleId),
  }),
];
