// The single job as its workflow carries it, and the read-model record built from it.
import { formatTags } from './delimited';
import { JobState, JobType } from './states';
import type { DriverSpec } from './driver';
import type { DriverHost } from './hosts';
import type { Job, SparkSpec } from './types';

/** Input of the job workflow `job/<jobId>`. The jobId is derived from the workflow id, never passed. */
export interface JobWorkflowInput {
  spec: SparkSpec;
  maxRetries: number;
  scheduleId?: string;
  /**
   * Set by the API, which writes the SUBMITTED record itself (version {@link SUBMITTED_VERSION}) right after
   * starting the workflow: the record's submitTime, and the workflow writes no SUBMITTED record of its own.
   */
  submittedAt?: number;
  /**
   * Set by an API that launches a host-bound cluster's first driver itself at submit (LAUNCH_AT_SUBMIT=all): its
   * own host, where the workflow then launches too, so that launch finds the driver instead of starting another
   * on some other host.
   */
  host?: DriverHost;
  /** Set when the workflow continues as new: the state it had. */
  /** `host`: the worker host that owns the current try's driver (domain/hosts.ts), absent for host-free clusters. */
  resume?: { job: Job; seq: number; leftovers?: string[]; host?: DriverHost };
}

/** Version of the SUBMITTED record the API writes; every write of the workflow has a higher one. */
export const SUBMITTED_VERSION = 1;

/** The SUBMITTED record; `now` is the workflow's start time unless the API set `submittedAt`. */
export function newJobRecord(jobId: string, input: JobWorkflowInput, now: number): Job {
  const s = input.spec;
  return {
    jobId,
    ...(input.scheduleId ? { scheduleId: input.scheduleId } : {}),
    jobName: s.name,
    jobType: JobType.SINGLE,
    tags: formatTags(s.tags),
    language: s.language,
    ...(s.jobClass ? { jobClass: s.jobClass } : {}),
    clusterName: s.clusterName,
    jobConfig: formatTags(s.jobConfig),
    args: s.args,
    pyRequirements: s.pyRequirements.join(';'),
    packages: s.packages.join(','),
    state: JobState.SUBMITTED,
    submitTime: input.submittedAt ?? now,
    maxRetries: input.maxRetries,
    attempt: 1,
    memorySettings: s.memorySettings,
  };
}

/**
 * Driver name of one try of a single job: deterministic, so a retried launch finds the same driver.
 * Scheduled jobs' ids carry the tick's time (`sched-<id>-2026-01-01T00:00:00Z`); the ':' is dropped
 * because driver names become folder and pod names.
 */
export const singleJobDriverId = (jobId: string, attempt: number): string =>
  `job-${jobId.replace(/[^A-Za-z0-9._-]/g, '')}-${attempt}`;

/** The driver of a single job's try, as both its workflow and the API's launch at submit ask for it. */
export function singleJobDriverSpec(jobId: string, attempt: number, input: JobWorkflowInput): DriverSpec {
  return {
    driverId: singleJobDriverId(jobId, attempt),
    role: 'application',
    spark: input.spec,
    env: {},
    labels: { jobId, ...(input.scheduleId ? { scheduleId: input.scheduleId } : {}) },
  };
}
