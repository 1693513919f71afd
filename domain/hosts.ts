// Host affinity: a driver of a local cluster is a process with its files on the host of the worker that
// launched it, so only a worker of that host can watch, read, stop or remove it. Each worker polls its
// host's own task queue besides the shared one; the launch answers with the host, and every later
// activity on that driver goes to the host's queue.

/** The worker host that owns a driver, as the launch answered it. */
export interface DriverHost {
  /** WORKER_HOST of the workers of that host. */
  id: string;
  /**
   * HOST_ABSENT_MS of the worker that launched it: an activity on the host that no worker takes within
   * this time ends with a schedule-to-start timeout, and the driver shows UNKNOWN with that cause.
   */
  absentMs: number;
}

/** Absence timeout of a host known only by its id (a record written before hosts carried one). */
export const DEFAULT_HOST_ABSENT_MS = 30_000;

/** The task queue the workers of one host poll besides the shared one (`taskQueue`: TASK_QUEUE). */
export const hostTaskQueue = (taskQueue: string, hostId: string): string => `${taskQueue}@${hostId}`;

/** The cause a driver shows while its host has no worker. */
export const hostAbsentMessage = (host: DriverHost): string =>
  `its worker host '${host.id}' is not answering (no worker took its task within ${Math.round(host.absentMs / 1000)} s)`;

/** ApplicationFailure type of a short workflow (logs, deletion) whose driver's host has no worker: 503 in the API. */
export const HOST_ABSENT = 'HostAbsent';
