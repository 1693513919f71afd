// Resource shapes of the API (docs/api.md) as the read models store them and the API returns them.
// Each shape is written once, as a zod schema; its TypeScript type is inferred from it. The API uses
// the schemas for its OpenAPI document, the projections and workflows use the types (domain/types.ts
// re-exports them, type-only, so no workflow bundle carries zod).
import { z } from 'zod';
import { CLUSTER_TYPES, GROUP_KINDS, GROUP_STATES, JOB_STATES, JOB_TYPES, LANGUAGES, SCHEDULE_STATES } from './states';

/** docs/api.md: Memory settings, response form. Absent values are omitted. */
export const MemorySettings = z.object({
  executors: z.number().int().optional(),
  driverCores: z.number().int().optional(),
  executorCores: z.number().int().optional(),
  driverMemory: z.string().optional(),
  executorMemory: z.string().optional(),
  dynamicAllocation: z.boolean(),
  initialExecutors: z.number().int().optional(),
  minExecutors: z.number().int().optional(),
  maxExecutors: z.number().int().optional(),
});
export type MemorySettings = z.infer<typeof MemorySettings>;

/** docs/api.md: Job. Its `language` is typed a plain string, not the enum of groups and schedules. */
export const Job = z.object({
  jobId: z.string(),
  groupId: z.string().optional(),
  scheduleId: z.string().optional(),
  jobName: z.string(),
  jobType: z.enum(JOB_TYPES),
  tags: z.string(),
  language: z.string(),
  jobClass: z.string().optional(),
  clusterName: z.string(),
  jobConfig: z.string(),
  args: z.array(z.string()),
  pyRequirements: z.string(),
  packages: z.string(),
  appId: z.string().optional(),
  state: z.enum(JOB_STATES),
  error: z.string().optional(),
  /** A driver that could not be removed yet (its cluster did not answer); removal goes on in the background. */
  cleanup: z.string().optional(),
  /** The worker host (WORKER_HOST) that runs its driver, on local clusters: its status and logs are read there. */
  host: z.string().optional(),
  submitTime: z.number().int(),
  startTime: z.number().int().optional(),
  endTime: z.number().int().optional(),
  maxRetries: z.number().int(),
  attempt: z.number().int(),
  memorySettings: MemorySettings,
  /** Its live Spark UI through the API, while its driver runs (api/spark-ui/). */
  uiUrl: z.string().optional(),
  /** Its run in the Spark History Server through the API, once it has ended with an application id. */
  historyUrl: z.string().optional(),
});
export type Job = z.infer<typeof Job>;

/** docs/api.md: Job instance result */
export const JobInstanceResult = z.object({
  jobInstanceId: z.string(),
  jobId: z.string().optional(),
  groupId: z.string(),
  startTime: z.number().int().optional(),
  endTime: z.number().int().optional(),
  jobClass: z.string().optional(),
  jobConfig: z.record(z.string(), z.unknown()),
  result: z.string().nullable().optional(),
  error: z.object({ message: z.string(), stackTrace: z.string() }).nullable().optional(),
});
export type JobInstanceResult = z.infer<typeof JobInstanceResult>;

/** docs/api.md: Group */
export const Group = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  kind: z.enum(GROUP_KINDS),
  tags: z.string(),
  language: z.enum(LANGUAGES),
  clusterName: z.string(),
  state: z.enum(GROUP_STATES),
  scale: z.number().int(),
  jobConfig: z.record(z.string(), z.string()),
  pyRequirements: z.string(),
  packages: z.string(),
  createdTime: z.number().int(),
  archivedTime: z.number().int().optional(),
  memorySettings: MemorySettings,
  autoPause: z.boolean(),
  /** True while paused on request (POST /group/{id}/pause): no drivers, no executions, until resumed. */
  paused: z.boolean().optional(),
  /** Why the group stopped replacing drivers that fail before READY (a crash loop); cleared on rescale, update, restart. */
  error: z.string().optional(),
  jobs: z.array(Job),
});
export type Group = z.infer<typeof Group>;

/** docs/api.md: Schedule */
export const Schedule = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  cron: z.string(),
  tags: z.string(),
  language: z.enum(LANGUAGES),
  clusterName: z.string(),
  jobConfig: z.record(z.string(), z.string()),
  pyRequirements: z.string(),
  packages: z.string(),
  state: z.enum(SCHEDULE_STATES),
  jobClass: z.string(),
  args: z.array(z.string()),
  startTime: z.number().int().optional(),
  endTime: z.number().int().optional(),
  maxRetries: z.number().int(),
  createdTime: z.number().int(),
  disabledTime: z.number().int().optional(),
  memorySettings: MemorySettings,
  jobs: z.array(Job),
});
export type Schedule = z.infer<typeof Schedule>;

/** docs/api.md: Job log entry */
export const JobLogEntry = z.object({
  name: z.string(),
  type: z.string(),
  role: z.string(),
  state: z.string(),
  from: z.number().int(),
  logSize: z.number().int(),
  fileName: z.string(),
  log: z.array(z.string()),
});
export type JobLogEntry = z.infer<typeof JobLogEntry>;

/** One object storage of a cluster (docs/api.md: Cluster); the same schema validates what a client sends. */
export const Storage = z
  .object({
    sparkBucket: z.string().trim().min(1).max(255).optional(),
    dataBucket: z.string().trim().min(1).max(255).optional(),
    extraBuckets: z.array(z.string().trim().min(1).max(255)).max(100).optional(),
    type: z.enum(['s3']).default('s3'),
    endpoint: z.url('must be a URL such as https://s3.example.com').optional(),
    region: z.string().trim().max(64).optional(),
    accessKey: z.string().max(4096).optional(),
    secretKey: z.string().max(4096).optional(),
  })
  .strict();
export type Storage = z.infer<typeof Storage>;

/** docs/api.md: Cluster, response form, the fields of every type (secret-bearing ones show a mask where set). */
export const Cluster = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  sparkMaster: z.string(),
  sparkDeployMode: z.string(),
  sparkStorage: z.string(),
  metastoreName: z.string().optional(),
  storages: z.record(z.string(), Storage),
  memorySettings: MemorySettings,
  defaultApplicationConfig: z.string(),
  type: z.enum(CLUSTER_TYPES),
  url: z.string(),
  // Each type's own fields (threads, a k8s cluster's credentials, a yarn cluster's queue, ...) are its `view`
  // (activities/adapters/<type>/cluster-type.ts); the API answers with ClusterView (cluster-types.ts), these
  // fields plus every type's.
  resourceQuota: z.record(z.string(), z.string()).optional(),
  limitRange: z.record(z.string(), z.record(z.string(), z.string())).optional(),
  createdTime: z.number().int(),
});
export type Cluster = z.infer<typeof Cluster>;
