// The service's resource shapes and state lists, taken from domain/ (the types are erased at build time; the
// state lists are plain constants): the console cannot drift from what the API returns.
export type * from '../../domain/types';
export {
  DEFAULT_JOB_STATE_FILTER,
  JOB_STATES,
  JOB_TYPES,
  TERMINAL_JOB_STATES,
  LANGUAGES,
  GROUP_KINDS,
  GROUP_STATES,
  SCHEDULE_STATES,
  type JobState,
  type Language,
  type GroupKind,
  type GroupState,
  type ScheduleState,
} from '../../domain/states';
export type { SqlEngineState } from '../../domain/sql-engine';
export { MEMORY_FIELDS } from '../../domain/memory';
