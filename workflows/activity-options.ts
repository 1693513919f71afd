// Named activity option sets, one place for every workflow's timeouts and retry policies.
import {
  ActivityFailure,
  proxyActivities,
  proxyLocalActivities,
  TimeoutFailure,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { RunnerRequest, RunnerResponse } from '../domain/group';
import { hostTaskQueue, type DriverHost } from '../domain/hosts';
import { groupTaskQueue } from '../domain/ids';

/** Read-model writes: local activities (no server round trip), retried until MongoDB answers. */
export const projection = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10s',
  retry: { initialInterval: '100ms', maximumInterval: '5s' },
});

/**
 * The long-lived entity workflows' read-model writes (a group, an SQL engine, a Spark Connect server):
 * ordinary activities, retried until MongoDB answers. Not local ones: a query that comes with a workflow task
 * which also runs local activities (the API's, or the Temporal UI's when an operator opens the workflow) makes
 * Core answer it and end the task before their results reach the workflow; they arrive in the next task, with
 * whatever signals came meanwhile, while a replay hands them over in the same task, before those signals. These
 * workflows decide right after their writes from state their handlers change (continue as new, cancelling
 * watches; launch unless a stop came), so they decided differently live and on replay, and the replay broke
 * (test/integration/group-replay-queries.test.ts). An activity's result always comes in a task of its own.
 */
export const entityProjection = proxyActivities<Activities>({
  startToCloseTimeout: '10s',
  retry: { initialInterval: '100ms', maximumInterval: '5s' },
});

/**
 * Launches and removals heartbeat while under way (activities/heartbeat.ts): a worker that dies during one is
 * noticed within 30 s, and an activity that ended leaves Temporal no timer due at its start-to-close timeout (one
 * a job, each costing the idle server a few ms minutes after the work: npm run soak).
 */
const HEARTBEAT = '30s';

/** Launching and removing drivers: idempotent, so retried freely; a spec that cannot run is not. */
const DRIVERS: ActivityOptions = {
  startToCloseTimeout: '10m',
  heartbeatTimeout: HEARTBEAT,
  retry: { initialInterval: '1s', maximumInterval: '30s', nonRetryableErrorTypes: ['ClusterNotFound', 'InvalidSpec'] },
};
export const drivers = proxyActivities<Activities>(DRIVERS);

/**
 * One launch attempt against a cluster that may not answer: the workflow sees each failure (it shows
 * the job UNKNOWN with the cause, waits and tries again until LAUNCH_DEADLINE_MS; workflows/launch.ts).
 */
const LAUNCHING: ActivityOptions = {
  startToCloseTimeout: '10m',
  heartbeatTimeout: HEARTBEAT,
  retry: { maximumAttempts: 1 },
};
export const launching = proxyActivities<Activities>(LAUNCHING);

/** A first quick try at removing a driver; if the cluster does not answer, `cleanup` goes on in the background. */
const QUICK_REMOVAL: ActivityOptions = {
  startToCloseTimeout: '1m',
  heartbeatTimeout: HEARTBEAT,
  retry: { initialInterval: '500ms', maximumAttempts: 2, nonRetryableErrorTypes: ['ClusterNotFound'] },
};
export const quickRemoval = proxyActivities<Activities>(QUICK_REMOVAL);

/** Removing a driver in the background until its cluster answers again, backing off to one try in 5 min. */
const CLEANUP: ActivityOptions = {
  startToCloseTimeout: '2m',
  heartbeatTimeout: HEARTBEAT,
  retry: { initialInterval: '2s', maximumInterval: '5m', nonRetryableErrorTypes: ['ClusterNotFound'] },
};
export const cleanup = proxyActivities<Activities>(CLEANUP);

/** Watching a driver: long-running and heartbeating, so a dead worker is noticed within 30 s. */
const WATCH: ActivityOptions = {
  startToCloseTimeout: '15m',
  heartbeatTimeout: HEARTBEAT,
  retry: { initialInterval: '1s', maximumInterval: '30s', nonRetryableErrorTypes: ['ClusterNotFound'] },
};
export const watch = proxyActivities<Activities>(WATCH);

/** Short calls the API waits on (logs, deletions, Temporal Schedule changes). */
const SHORT: ActivityOptions = {
  startToCloseTimeout: '30s',
  retry: {
    initialInterval: '500ms',
    maximumInterval: '10s',
    maximumAttempts: 5,
    nonRetryableErrorTypes: ['ClusterNotFound', 'InvalidSchedule', 'Misconfigured'],
  },
};
export const short = proxyActivities<Activities>(SHORT);

/** Waiting for a SQL engine to answer: its own start timeout bounds the activity. */
const engineStartOptions = (timeoutMs: number): ActivityOptions => ({
  startToCloseTimeout: timeoutMs + 60_000,
  heartbeatTimeout: HEARTBEAT,
  retry: {
    initialInterval: '1s',
    maximumInterval: '10s',
    nonRetryableErrorTypes: ['ClusterNotFound', 'EngineFailed'],
  },
});
export const engineStart = (timeoutMs: number) => proxyActivities<Activities>(engineStartOptions(timeoutMs));

/** The hourly retention sweep: long, retried a few times. */
export const retention = proxyActivities<Activities>({
  startToCloseTimeout: '30m',
  retry: { initialInterval: '10s', maximumInterval: '5m', maximumAttempts: 5 },
});

/** The runner's activity (Python, runner/runner.py), called by name on its group's task queue. */
interface RunnerActivities {
  executeJobInstance(req: RunnerRequest): Promise<RunnerResponse>;
}

/**
 * An execution on a group's runners. A paused group needs a driver start (tens of seconds) before a runner
 * polls, so there is no schedule-to-start limit unless `waitMs` is given: past it, with no runner taking it,
 * the execution ends with the reason (answered 409 by the API).
 */
export const runner = (groupId: string, waitMs: number | undefined) =>
  proxyActivities<RunnerActivities>({
    taskQueue: groupTaskQueue(groupId),
    startToCloseTimeout: '1h',
    ...(waitMs !== undefined ? { scheduleToStartTimeout: waitMs } : {}),
    retry: { initialInterval: '1s', maximumInterval: '10s', maximumAttempts: 3 },
  });

/** The option sets of activities on a driver, run on the host that owns it (onHost). */
export interface DriverSets {
  drivers: typeof drivers;
  launching: typeof launching;
  quickRemoval: typeof quickRemoval;
  cleanup: typeof cleanup;
  watch: typeof watch;
  short: typeof short;
  engineStart: typeof engineStart;
}

const SHARED: DriverSets = { drivers, launching, quickRemoval, cleanup, watch, short, engineStart };
const byHost = new Map<string, DriverSets>();

/**
 * The option sets for a driver on `host` (domain/hosts.ts): the same sets on the host's task queue. The
 * calls that must notice a host gone (a watch, a launch attempt, a quick removal, logs, an engine's start)
 * also get a schedule-to-start timeout of the host's absentMs, after which the caller shows the cause; the
 * ones that must happen eventually (removals in the background, a group's launches and removals) wait
 * for the host. No host (drivers of k8s and yarn clusters, or launched before hosts existed): the shared
 * sets as they always were, so histories recorded without hosts replay unchanged.
 */
export function onHost(host: DriverHost | undefined): DriverSets {
  if (!host) return SHARED;
  const key = `${host.id}/${host.absentMs}`;
  let sets = byHost.get(key);
  if (!sets) {
    const taskQueue = hostTaskQueue(workflowInfo().taskQueue, host.id);
    const waiting = (o: ActivityOptions): ActivityOptions => ({ ...o, taskQueue });
    const noticing = (o: ActivityOptions): ActivityOptions => ({
      ...o,
      taskQueue,
      scheduleToStartTimeout: host.absentMs,
    });
    sets = {
      drivers: proxyActivities<Activities>(waiting(DRIVERS)),
      launching: proxyActivities<Activities>(noticing(LAUNCHING)),
      quickRemoval: proxyActivities<Activities>(noticing(QUICK_REMOVAL)),
      cleanup: proxyActivities<Activities>(waiting(CLEANUP)),
      watch: proxyActivities<Activities>(noticing(WATCH)),
      short: proxyActivities<Activities>(noticing(SHORT)),
      engineStart: (timeoutMs: number) => proxyActivities<Activities>(noticing(engineStartOptions(timeoutMs))),
    };
    byHost.set(key, sets);
  }
  return sets;
}

/** Whether an activity on a host ended because no worker of that host took it in time (onHost). */
export const isHostAbsent = (e: unknown): boolean =>
  e instanceof ActivityFailure && e.cause instanceof TimeoutFailure && e.cause.timeoutType === 'SCHEDULE_TO_START';
