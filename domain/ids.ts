// Ids of Temporal entities, each derived from the entity's id (one entity, one workflow).

export const jobWorkflowId = (jobId: string): string => `job/${jobId}`;
export const groupWorkflowId = (groupId: string): string => `group/${groupId}`;
export const jobInstanceWorkflowId = (jobInstanceId: string): string => `jobinstance/${jobInstanceId}`;
export const scheduleId = (id: string): string => `schedule/${id}`;
/** The workflow that owns a schedule's settings, keeps its Temporal Schedule in step and writes its read model. */
export const scheduleKeeperWorkflowId = (id: string): string => `schedulekeeper/${id}`;
/** Task queue the runners of one group's drivers poll. */
export const groupTaskQueue = (groupId: string): string => `group/${groupId}`;

/** Workflow ids of scheduled runs are `job/sched-<scheduleId>-<timestamp>`; the jobId is the part after `job/`. */
export const jobIdFromWorkflowId = (workflowId: string): string => workflowId.replace(/^job\//, '');

/** Search attributes registered on the dev server (scripts/services.ts) and set by workflows. */
export const SearchAttr = {
  jobId: 'SparkJobId',
  groupId: 'SparkGroupId',
  scheduleId: 'SparkScheduleId',
  clusterName: 'SparkClusterName',
  jobState: 'SparkJobState',
  jobType: 'SparkJobType',
  /** The engine id of an SQL engine workflow (sparksql-<clusterId>, trino-<clusterId>). */
  sqlEngine: 'SparkSqlEngine',
} as const;
