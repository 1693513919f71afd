// States and kinds of jobs, groups, schedules, clusters and SQL engines as const objects with derived union types.
// Deterministic: imported by workflows and by the API alike.

export const JobState = {
  SUBMITTED: 'SUBMITTED',
  STARTING: 'STARTING',
  READY: 'READY',
  BUSY: 'BUSY',
  FINISHED: 'FINISHED',
  FAILED: 'FAILED',
  CANCELED: 'CANCELED',
  UNKNOWN: 'UNKNOWN',
} as const;
export type JobState = (typeof JobState)[keyof typeof JobState];
export const JOB_STATES = Object.values(JobState) as [JobState, ...JobState[]];

/** The extended shape's default job-state filter of every list (operations 4.1, 4.11, 4.16). */
export const DEFAULT_JOB_STATE_FILTER: JobState[] = ['SUBMITTED', 'STARTING', 'READY', 'BUSY'];

/** A job in one of these states will not change again. */
export const TERMINAL_JOB_STATES: ReadonlySet<JobState> = new Set(['FINISHED', 'FAILED', 'CANCELED']);
export const isTerminal = (s: JobState): boolean => TERMINAL_JOB_STATES.has(s);

export const JobType = { SINGLE: 'SINGLE', INTERACTIVE: 'INTERACTIVE', SHELL: 'SHELL' } as const;
export type JobType = (typeof JobType)[keyof typeof JobType];
export const JOB_TYPES = Object.values(JobType) as [JobType, ...JobType[]];

export const Language = { SCALA: 'SCALA', PYTHON: 'PYTHON' } as const;
export type Language = (typeof Language)[keyof typeof Language];
export const LANGUAGES = Object.values(Language) as [Language, ...Language[]];

export const GroupState = { ACTIVE: 'ACTIVE', ARCHIVED: 'ARCHIVED' } as const;
export type GroupState = (typeof GroupState)[keyof typeof GroupState];
export const GROUP_STATES = Object.values(GroupState) as [GroupState, ...GroupState[]];

export const GroupKind = { JOB: 'JOB', CODE: 'CODE' } as const;
export type GroupKind = (typeof GroupKind)[keyof typeof GroupKind];
export const GROUP_KINDS = Object.values(GroupKind) as [GroupKind, ...GroupKind[]];

export const ScheduleState = { ENABLED: 'ENABLED', DISABLED: 'DISABLED', PAUSED: 'PAUSED' } as const;
export type ScheduleState = (typeof ScheduleState)[keyof typeof ScheduleState];
export const SCHEDULE_STATES = Object.values(ScheduleState) as [ScheduleState, ...ScheduleState[]];

export const ClusterType = { K8S: 'k8s', LOCAL: 'local', YARN: 'yarn' } as const;
export type ClusterType = (typeof ClusterType)[keyof typeof ClusterType];
export const CLUSTER_TYPES = Object.values(ClusterType) as [ClusterType, ...ClusterType[]];

export const SqlEngine = { SPARK_SQL: 'SPARK_SQL', TRINO: 'TRINO' } as const;
export type SqlEngine = (typeof SqlEngine)[keyof typeof SqlEngine];
export const SQL_ENGINES = Object.values(SqlEngine) as [SqlEngine, ...SqlEngine[]];
