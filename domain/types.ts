// Resource shapes of the interface (spec §2) as the read models store and the API returns them.
import type { GroupKind, GroupState, JobState, JobType, Language, ScheduleState } from './states';

/** spec §2.7, response form. Absent values are omitted. */
export interface MemorySettings {
  executors?: number;
  driverCores?: number;
  executorCores?: number;
  driverMemory?: string;
  executorMemory?: string;
  dynamicAllocation: boolean;
  initialExecutors?: number;
  minExecutors?: number;
  maxExecutors?: number;
}

/** Files uploaded with a job, group or schedule, as paths in the artifact store. */
export interface Artifacts {
  jars: string[];
  files: string[];
  pyFiles: string[];
}

/**
 * Everything needed to launch a Spark application or an interactive driver: the desired spec.
 * Carried by workflows; the adapters turn it into a process or a pod.
 */
export interface SparkSpec {
  name: string;
  language: Language;
  clusterName: string;
  /** SCALA: main class inside the jars; PYTHON: module (file name among pyFiles) that is the main program. */
  jobClass?: string;
  args: string[];
  jobConfig: Record<string, string>;
  pyRequirements: string[];
  packages: string[];
  memorySettings: MemorySettings;
  artifacts: Artifacts;
  tags: Record<string, string>;
}

/** spec §2.4 */
export interface Job {
  jobId: string;
  groupId?: string;
  scheduleId?: string;
  jobName: string;
  jobType: JobType;
  tags: string;
  language: Language;
  jobClass?: string;
  clusterName: string;
  jobConfig: string;
  args: string[];
  pyRequirements: string;
  packages: string;
  appId?: string;
  state: JobState;
  error?: string;
  submitTime: number;
  startTime?: number;
  endTime?: number;
  maxRetries: number;
  attempt: number;
  memorySettings: MemorySettings;
}

/** spec §2.5 */
export interface JobInstanceResult {
  jobInstanceId: string;
  jobId?: string;
  groupId: string;
  startTime?: number;
  endTime?: number;
  jobClass?: string;
  jobConfig: Record<string, unknown>;
  result?: string | null;
  error?: { message: string; stackTrace: string } | null;
}

/** spec §2.3 */
export interface Group {
  id: string;
  name: string;
  description: string;
  kind: GroupKind;
  tags: string;
  language: Language;
  clusterName: string;
  state: GroupState;
  scale: number;
  jobConfig: Record<string, string>;
  pyRequirements: string;
  packages: string;
  createdTime: number;
  archivedTime?: number;
  memorySettings: MemorySettings;
  autoPause: boolean;
  jobs: Job[];
}

/** spec §2.6 */
export interface Schedule {
  id: string;
  name: string;
  description: string;
  cron: string;
  tags: string;
  language: Language;
  clusterName: string;
  jobConfig: Record<string, string>;
  pyRequirements: string;
  packages: string;
  state: ScheduleState;
  jobClass: string;
  args: string[];
  startTime?: number;
  endTime?: number;
  maxRetries: number;
  createdTime: number;
  disabledTime?: number;
  memorySettings: MemorySettings;
  jobs: Job[];
}

/** spec §2.9 */
export interface JobLogEntry {
  name: string;
  type: string;
  role: string;
  state: string;
  from: number;
  logSize: number;
  fileName: string;
  log: string[];
}
