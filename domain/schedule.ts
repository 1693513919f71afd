// Schedules: what the schedule keeper workflow carries and the changes it takes.
import type { Schedule, SparkSpec } from './types';

export interface ScheduleSettingsPatch {
  description?: string;
  tags?: Record<string, string>;
  jobConfig?: Record<string, string>;
  cron?: string;
  args?: string[];
  jobClass?: string;
  pyRequirements?: string[];
  packages?: string[];
  startTime?: number | null;
  endTime?: number | null;
  maxRetries?: number;
  memorySettings?: SparkSpec['memorySettings'];
  addArtifacts?: SparkSpec['artifacts'];
}

export interface ScheduleWorkflowInput {
  schedule: Omit<Schedule, 'jobs'>;
  spec: SparkSpec;
  /** Task queue the scheduled job workflows run on. */
  taskQueue: string;
  resume?: { seq: number };
}

/** What the Temporal Schedule `schedule/<scheduleId>` is made of. */
export interface TemporalScheduleDef {
  scheduleId: string;
  cron: string;
  startTime?: number;
  endTime?: number;
  paused: boolean;
  note: string;
  taskQueue: string;
  spec: SparkSpec;
  maxRetries: number;
}

/**
 * Overlap policy of every schedule: a run whose time comes while the previous run of the same schedule
 * is still going waits for it (one run at most is kept waiting; further ticks in that time are
 * dropped). A schedule so never runs two jobs at once and never piles runs up. Ticks missed while the
 * service was down are run after restart, within the catch-up window.
 */
export const SCHEDULE_OVERLAP_POLICY = 'BUFFER_ONE' as const;
export const SCHEDULE_CATCHUP_WINDOW = '1 day';

/** Workflow id prefix of scheduled runs; Temporal appends the tick's time to it. */
export const scheduledJobIdPrefix = (scheduleId: string): string => `sched-${scheduleId}`;
