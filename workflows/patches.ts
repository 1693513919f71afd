// Workflow patches (Temporal's `patched()`): the one list of them, with their dates.
//
// A patch keeps a running workflow replayable across a deploy of changed workflow code. This service keeps one
// only across a tagged release: a change that histories recorded by a released version would not replay
// (job-workflow-replay.test.ts replays the fixtures recorded at the last baseline) goes behind a patch listed
// here, with the date and the release it protects. Once no workflow of that release still runs, the patch is
// deprecated (`deprecatePatch`), then removed a release later, and the fixtures are recorded again
// (`npm run record:replay`).
//
// No release has been tagged yet (0.1.0): the pre-release patches (fewer-steps-per-task, finish-in-watch,
// end-keeps-start, finish-before-removal, crash-loop-backoff, delete-while-cleaning) were retired on
// 2026-11-26 and the fixtures recorded from that day's code. Workflows started by older code do not replay
// under it: drain or terminate them before deploying it. On 2026-11-27 the group, SQL engine and Connect
// server workflows moved their read-model writes from local to ordinary activities (activity-options.ts,
// entityProjection, says why); the engine fixtures were recorded again, and groups, SQL engines and Connect
// servers started before that do not replay: stop them before deploying. On 2026-11-27 (later) the group loop
// also steps again after a change that came while it wrote (group-entity.ts, steppedAt): a group whose history
// has a wake or a signal of a starting driver during a write may not replay under older code, nor the reverse.

/** Engines' ensure answers once their record is written (below). */
export const ENSURE_AFTER_WRITE = 'ensure-after-write';

/** The patches in force: id, the date it was added, and the release whose histories it keeps replayable. */
export const PATCHES: readonly { id: string; since: string; release: string }[] = [
  // An engine's (or Connect server's) `ensure` with wait answers once its RUNNING or FAILED record is written, not
  // as soon as the workflow holds that state: a client that got 409 "failed to start" and listed the engines at
  // once saw STARTING (ci15). It keeps running engines replayable across the deploy (engine-workflow-replay).
  { id: ENSURE_AFTER_WRITE, since: '2026-11-27', release: 'pre-release engines (fixtures of 2026-11-27)' },
];
