// Groups of interactive drivers: what the group workflow carries, and the messages it takes.
import type { CrashLoop, CrashLoopSettings } from './broken-clusters/crash-loops';
import type { DriverHost } from './hosts';
import type { Group, JobInstanceResult, SparkSpec } from './types';

/** Settings an update (4.4) may change; absent fields stay as they are. */
export interface GroupSettingsPatch {
  description?: string;
  tags?: Record<string, string>;
  jobConfig?: Record<string, string>;
  pyRequirements?: string[];
  packages?: string[];
  memorySettings?: SparkSpec['memorySettings'];
  autoPause?: boolean;
  scale?: number;
  /** Newly uploaded files; each replaces a file of the same name and kind. */
  addArtifacts?: SparkSpec['artifacts'];
}

export interface GroupWorkflowInput {
  group: Omit<Group, 'jobs'>;
  spec: SparkSpec;
  idlePauseMs: number;
  maxScale: number;
  /** How the group backs off from drivers failing before READY (lib/config.ts CRASH_*); defaults when absent. */
  crashLoop?: CrashLoopSettings;
  resume?: GroupResume;
}

export interface InstanceState {
  jobId: string;
  /** Settings generation the driver was started with; older generations are replaced after an update. */
  generation: number;
  ready: boolean;
  busy: boolean;
  /** Set when the instance is to stop once it is idle (scale down, update, pause, archive). */
  draining: boolean;
  /** host:port of the runner's direct execute channel, from its instanceReady signal (never in API responses). */
  endpoint?: string;
  /** The worker host that owns its driver (local clusters), from the launch: later calls on it run there. */
  host?: DriverHost;
}

/** A READY instance the API may call directly (the group workflow's `directEndpoints` query). */
export interface DirectEndpoint {
  instanceId: string;
  /** The instance's driver id: the API derives the channel's secret from it. */
  driverId: string;
  endpoint: string;
}

/** What the group workflow's query answers: whether it auto-paused, its settings generation, its instances. */
export interface GroupSummary {
  paused: boolean;
  generation: number;
  instances: import('./types').Job[];
}

/** What a new group's workflow starts from (a continued run gets the previous run's instead). */
export const newGroupResume = (now: number): GroupResume => ({
  seq: 0,
  nextInstance: 1,
  generation: 1,
  paused: false,
  lastActivity: now,
  instances: [],
  jobs: {},
});

export interface GroupResume {
  seq: number;
  nextInstance: number;
  generation: number;
  paused: boolean;
  lastActivity: number;
  instances: InstanceState[];
  jobs: Record<string, import('./types').Job>;
  /** Drivers failing before READY one after another (absent in runs started before crash-loop backoff). */
  crash?: CrashLoop;
}

/** Input of the short workflow `jobinstance/<jobInstanceId>` (4.5, 4.7). */
export interface JobInstanceInput {
  jobInstanceId: string;
  groupId: string;
  groupName: string;
  clusterName: string;
  tagMap: Record<string, string>;
  type: 'interactive_job_execute' | 'interactive_code_execute';
  jobClass?: string;
  code?: string;
  jobConfig: Record<string, unknown>;
  /** Wake the group (it may have paused its drivers) before the execution waits for a driver. */
  wakeGroup: boolean;
  /** Write a record before running (submit without waiting: read-your-writes). */
  announce: boolean;
  /** How long the execution waits for a ready instance (EXECUTE_WAIT_MS); absent: no limit (older runs). */
  waitMs?: number;
}

/** Payload of the runner's activity `executeJobInstance` (runner/runner.py). */
export interface RunnerRequest {
  jobInstanceId: string;
  groupId: string;
  type: JobInstanceInput['type'];
  jobClass?: string;
  code?: string;
  jobConfig: Record<string, unknown>;
}
export interface RunnerResponse {
  result: string | null;
  error: { message: string; stackTrace: string } | null;
  startTime: number;
  endTime: number;
  instanceId: string;
}

export type JobInstanceRecord = JobInstanceResult & {
  groupName: string;
  clusterName: string;
  tagMap: Record<string, string>;
};

/** What the runner is asked to run for an execution, by the workflow's activity or the direct channel alike. */
export const runnerRequest = (input: JobInstanceInput): RunnerRequest => ({
  jobInstanceId: input.jobInstanceId,
  groupId: input.groupId,
  type: input.type,
  ...(input.jobClass ? { jobClass: input.jobClass } : {}),
  ...(input.code !== undefined ? { code: input.code } : {}),
  jobConfig: input.jobConfig,
});

/** The result record of an execution that started at `startTime` and has no outcome yet. */
export const startedRecord = (input: JobInstanceInput, startTime: number): JobInstanceRecord => ({
  jobInstanceId: input.jobInstanceId,
  groupId: input.groupId,
  groupName: input.groupName,
  clusterName: input.clusterName,
  tagMap: input.tagMap,
  ...(input.jobClass ? { jobClass: input.jobClass } : {}),
  jobConfig: input.jobConfig,
  startTime,
});

export const instanceDriverId = (instanceJobId: string): string => `inst-${instanceJobId}`;
