// The service's resource shapes, taken from domain/ (types erased at build time; the state lists are plain
// constants): the console cannot drift from what the API returns.
export type {
  Cluster,
  Group,
  Job,
  JobInstanceResult,
  JobLogEntry,
  MemorySettings,
  Schedule,
} from '../../domain/resources';
export {
  JOB_STATES,
  TERMINAL_JOB_STATES,
  LANGUAGES,
  GROUP_KINDS,
  type JobState,
  type Language,
  type GroupKind,
  type ScheduleState,
} from '../../domain/states';
