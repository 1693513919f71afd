// Patch ids that more than one module checks. A patch id's first check records a marker and upserts the
// TemporalChangeVersion search attribute (a history event and a visibility write each), so changes made
// together share one id: a workflow started before them replays without the marker and keeps the old steps.

/**
 * Fewer steps per workflow task: no OpenTelemetry interceptors for untraced workflows
 * (workflows/trace-interceptors.ts), and the single job's leaner steps (workflows/job-run.ts).
 */
export const FEWER_STEPS = 'fewer-steps-per-task';

/**
 * The watch activity of a single job also writes FINISHED and removes the driver when it succeeds, so a job
 * that runs to its end costs one workflow task and one activity less (workflows/job-run.ts).
 */
export const FINISH_IN_WATCH = 'finish-in-watch';

/**
 * A single job that ends while the workflow still holds its STARTING record (a stop or cancel while the watch
 * activity, which wrote BUSY, watches on) takes the start time and appId kept in the read model into its own
 * record, so its query and result show them too (workflows/job-run.ts).
 */
export const END_KEEPS_START = 'end-keeps-start';
