// The state of one single job workflow and the steps of its life: launch a try, watch it, retry or
// finish, stop on request, clean up when cancelled. The state moves are pure functions in domain/.
//
// A cluster that does not answer never holds a job up: launch attempts show the job UNKNOWN with the
// cause and end at LAUNCH_DEADLINE_MS (workflows/launch.ts); stop and cancel show FINISHED / CANCELED
// first, and a driver that cannot be removed yet is noted in the job's `cleanup` and removed in the
// background when its cluster answers (by workflows/driver-cleanup.ts once the job has ended).
//
// Over 300 lines on purpose: one class whose fields every step reads and writes; split across files, a
// reader would have to hold the same state in mind across them. Launch attempts (launch.ts), the state
// moves (domain/job.ts), driver removal (driver-removal.ts) and driver cleanup (driver-cleanup.ts) already live apart.
import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { DriverStatus } from '../domain/driver';
import { failureMessage } from '../domain/failure';
import { newJobRecord, singleJobDriverId, singleJobDriverSpec, type JobWorkflowInput } from '../domain/job';
import {
  afterFailedTry,
  CANCELED_MESSAGE,
  cleanupNote,
  failedTryReason,
  finishedJob,
  startingJob,
  tryOutcome,
  withDriverStatus,
  withReachability,
  type Unreachable,
} from '../domain/job-transitions';
import { isTerminal, JobState } from '../domain/states';
import type { Job } from '../domain/types';
import { hostAbsentMessage, type DriverHost } from '../domain/hosts';
import { isHostAbsent, onHost, projection } from './activity-options';
import { driverCleanupWorkflow, driverCleanupWorkflowId } from './driver-cleanup';
import { removeDriver, removeInBackground } from './driver-removal';
import { isLaunchDeadline, launchUntilDeadline } from './launch';
import { setSearch } from './search';
import { WriteVersions } from './versions';

/** Whether two records are equal (records are built the same way, so their keys come in the same order). */
const sameRecord = (a: Job, b: Job): boolean => JSON.stringify(a) === JSON.stringify(b);

/** How a watched try ended: the job is done, or the try failed with this status. */
type TryEnd = { done: Job } | { failed: DriverStatus };

export class JobRun {
  job: Job;
  private readonly versions: WriteVersions;
  private projected: boolean;
  private stopRequested = false;
  /** Set by DELETE /job: the record is gone, so nothing is written any more (cleanup still goes on). */
  private deleted = false;
  private unreachable: Unreachable | undefined;
  /** When the current try began launching; undefined once its driver ran (or after continue-as-new). */
  private startingSince: number | undefined;
  /** Drivers whose removal failed so far, with the cause; a background removal runs for each. */
  private readonly leftovers = new Map<string, string>();
  /** The SparkJobState value last upserted (it is upserted only when it changes). */
  private searchedState: string | undefined;
  /** The launch attempt in flight, if any: a cancel waits for it before removing the driver. */
  private launchInFlight: Promise<unknown> | undefined;
  /**
   * The worker host that owns the job's drivers (local clusters; domain/hosts.ts), from the first launch: every
   * later try, watch and removal runs there, so a retry finds its driver instead of starting another elsewhere.
   */
  private host: DriverHost | undefined;

  constructor(
    private readonly input: JobWorkflowInput,
    readonly jobId: string,
  ) {
    this.job = input.resume?.job ?? newJobRecord(jobId, input, workflowInfo().runStartTime.getTime());
    this.versions = new WriteVersions(input.resume?.seq ?? 0);
    this.host = input.resume?.host ?? input.host;
    this.projected = input.resume !== undefined;
    for (const id of input.resume?.leftovers ?? []) this.removeInBackground(id, 'carried over');
  }

  // ---- messages -----------------------------------------------------------------------------------
  async accepted(): Promise<{ jobId: string }> {
    await condition(() => this.projected);
    return { jobId: this.jobId };
  }

  requestStop(): void {
    this.stopRequested = true;
  }

  forget(): void {
    this.deleted = true;
  }

  // ---- life ---------------------------------------------------------------------------------------
  /** Runs tries until the job is done; returns its final record. */
  async run(): Promise<Job> {
    const { job, input } = this;
    if (!input.resume && input.submittedAt !== undefined) {
      // The API wrote the SUBMITTED record and set the search attributes at start: straight to the launch.
      this.projected = true;
      this.searchedState = this.job.state;
    } else if (!input.resume) {
      setSearch({
        jobId: this.jobId,
        clusterName: job.clusterName,
        jobType: job.jobType,
        scheduleId: input.scheduleId,
        jobState: job.state,
      });
      this.searchedState = job.state;
      await this.project();
    }
    // After continue-as-new the current try goes on: launching again finds its driver.
    let fresh = input.resume === undefined;
    for (;;) {
      let status: DriverStatus | undefined;
      let timedOut = '';
      try {
        status = await this.launch(fresh);
      } catch (e) {
        if (isCancellation(e)) throw e;
        // Out of time: this try failed (another may follow); anything else permanent fails the job.
        if (!isLaunchDeadline(e)) return this.finish(JobState.FAILED, failureMessage(e));
        timedOut = failureMessage(e);
      }
      fresh = true;
      const end: TryEnd = status ? await this.watchTry(status) : { failed: { phase: 'FAILED', message: timedOut } };
      if ('done' in end) return end.done;
      await this.removeDriver(this.driverId());
      const next = afterFailedTry(this.job, failedTryReason(end.failed), Date.now());
      this.job = next.job;
      this.unreachable = undefined;
      if (!next.retry) {
        await this.project();
        return this.job;
      }
    }
  }

  /** Cleanup after cancellation (run it non-cancellable): CANCELED at once, then the driver goes. */
  async cancelled(): Promise<void> {
    if (isTerminal(this.job.state)) return this.handOverCleanup();
    await this.finish(JobState.CANCELED, CANCELED_MESSAGE);
    // A launch still under way would create the driver after its removal: let it end first.
    if (this.launchInFlight) await this.launchInFlight;
    await this.removeDriver(this.driverId());
    await this.handOverCleanup();
  }

  /**
   * The job has ended: drivers not removed yet go to a workflow of their own (`cleanup/job/<jobId>`,
   * outliving this one), so this workflow ends now and nothing waits on the cluster.
   */
  async handOverCleanup(): Promise<void> {
    if (this.leftovers.size === 0) return;
    await startChild(driverCleanupWorkflow, {
      workflowId: driverCleanupWorkflowId(this.jobId),
      parentClosePolicy: 'ABANDON',
      args: [
        {
          clusterName: this.job.clusterName,
          driverIds: [...this.leftovers.keys()],
          job: { ...this.job },
          version: this.versions.next(),
          deleted: this.deleted,
          ...(this.host ? { host: this.host } : {}),
        },
      ],
    });
  }

  private driverId(): string {
    return singleJobDriverId(this.jobId, this.job.attempt);
  }

  private async project(): Promise<void> {
    this.syncSearch();
    if (this.deleted) return;
    // An end without a start time: the job may have started unseen (its watch wrote BUSY, then a stop or cancel
    // ended the watch). The end's write answers what it kept of the stored record, and the workflow takes it.
    if (isTerminal(this.job.state) && this.job.startTime === undefined)
      this.job = { ...this.job, ...(await projection.projectJobEnd({ ...this.job }, this.versions.next())) };
    else await projection.projectJob({ ...this.job }, this.versions.next());
    this.projected = true;
  }

  /** Upserts SparkJobState when it changed. */
  private syncSearch(): void {
    if (this.job.state !== this.searchedState) setSearch({ jobState: this.job.state });
    this.searchedState = this.job.state;
  }

  /**
   * Watches the driver once, until its status changes. The watch activity writes the records on the way (with
   * versions reserved here): BUSY when a driver that has not run yet is seen running (it then watches on), and
   * FINISHED and the driver's removal when it succeeds. That saves the workflow a task per record; the records
   * it wrote become the job's.
   */
  private async watchOnce(known: DriverStatus): Promise<{ status: DriverStatus; done?: Job }> {
    try {
      return await this.watchOnHost(known);
    } catch (e) {
      // Its host has no worker: the driver may well be running there; UNKNOWN with the cause until it is back.
      if (this.host && isHostAbsent(e)) return { status: { phase: 'UNKNOWN', message: hostAbsentMessage(this.host) } };
      throw e;
    }
  }

  private async watchOnHost(known: DriverStatus): Promise<{ status: DriverStatus; done?: Job }> {
    const { clusterName } = this.job;
    const { watch } = onHost(this.host);
    const since = this.startingSince;
    const starting = known.phase === 'PENDING' && this.job.state === JobState.STARTING;
    const busy = known.phase === 'RUNNING' && this.job.state === JobState.BUSY;
    if (!starting && !busy)
      return { status: await watch.watchDriver(clusterName, this.driverId(), known, undefined, since) };
    const record = { job: { ...this.job }, version: this.versions.next() };
    const r = await watch.watchJobDriver(
      clusterName,
      this.driverId(),
      known,
      since,
      record,
      undefined,
      this.versions.next(),
    );
    if (r.busy) {
      this.job = r.busy;
      this.startingSince = undefined;
      this.syncSearch();
    }
    if (!r.finished) return { status: r.status };
    this.job = r.finished;
    this.unreachable = undefined;
    this.syncSearch();
    if (r.removalError !== undefined) {
      this.removeInBackground(this.driverId(), r.removalError);
      await this.projectCleanup();
    }
    return { status: r.status, done: this.job };
  }

  /** The job with its driver's latest status, UNKNOWN with the cause while the cluster does not answer. */
  private observe(status: DriverStatus): void {
    const now = Date.now();
    const seen = withDriverStatus(this.job, status, now);
    const cause = status.phase === 'UNKNOWN' ? (status.message ?? 'the cluster does not answer') : undefined;
    const r = withReachability(seen, cause, now, this.unreachable);
    this.job = r.job;
    this.unreachable = r.unreachable;
    if (status.phase === 'RUNNING') this.startingSince = undefined;
  }

  /** Launches the current try's driver. A fresh try is STARTING: the launch activity writes that record. */
  private async launch(fresh: boolean): Promise<DriverStatus> {
    let starting: { job: Job; version: number } | undefined;
    if (fresh) {
      this.job = startingJob(this.job);
      starting = { job: { ...this.job }, version: this.versions.next() };
      this.syncSearch();
    }
    const { status, since } = await launchUntilDeadline({
      clusterName: this.job.clusterName,
      spec: singleJobDriverSpec(this.jobId, this.job.attempt, this.input),
      starting,
      host: this.host,
      unreachable: (cause) => {
        this.observe({ phase: 'UNKNOWN', message: cause });
        return this.project();
      },
      inFlight: (attempt: Promise<unknown>) => void (this.launchInFlight = attempt),
    });
    this.startingSince = since;
    if (status.host) {
      this.host ??= status.host;
      if (this.job.host !== status.host.id) this.job = { ...this.job, host: status.host.id };
    }
    return status;
  }

  /** Watches the current try until it ends or a stop is requested; continues as new when suggested. */
  private async watchTry(first: DriverStatus): Promise<TryEnd> {
    let status = first;
    for (;;) {
      const before = this.job;
      this.observe(status);
      // A status that changes nothing (PENDING while STARTING, SUCCEEDED while BUSY) is not written again.
      if (!sameRecord(before, this.job)) await this.project();
      const outcome = tryOutcome(status);
      if (outcome === 'succeeded') return { done: await this.removeAndFinish() };
      if (outcome === 'failed') return { failed: status };
      if (this.stopRequested) return { done: await this.removeAndFinish() };
      const scope = new CancellationScope();
      const known = status;
      const next = scope.run(() => this.watchOnce(known));
      await Promise.race([next, condition(() => this.stopRequested)]);
      if (this.stopRequested) {
        scope.cancel();
        return { done: await this.removeAndFinish() };
      }
      const watched: { status: DriverStatus; done?: Job } = await next;
      if (watched.done) return { done: watched.done };
      status = watched.status;
      if (workflowInfo().continueAsNewSuggested) {
        await condition(allHandlersFinished);
        await continueAsNew<(input: JobWorkflowInput) => Promise<Job>>({
          ...this.input,
          resume: {
            job: this.job,
            seq: this.versions.last,
            leftovers: [...this.leftovers.keys()],
            ...(this.host ? { host: this.host } : {}),
          },
        });
      }
    }
  }

  /** A succeeded or stopped try: the job is FINISHED, and its driver goes. */
  private async removeAndFinish(): Promise<Job> {
    const done = await this.finish(JobState.FINISHED);
    await this.removeDriver(this.driverId());
    return done;
  }

  /** Removes a driver; if its cluster does not answer, notes it on the job and goes on removing in the background. */
  private removeDriver(driverId: string): Promise<void> {
    return removeDriver(
      this.job.clusterName,
      driverId,
      {
        noted: (cause) => {
          this.leftovers.set(driverId, cause);
          return this.projectCleanup();
        },
        ended: () => this.leftoverGone(driverId),
      },
      this.host,
    );
  }

  /** While the job lives, a failed try's driver is removed beside it; what is left when it ends is handed over. */
  private removeInBackground(driverId: string, cause: string): void {
    this.leftovers.set(driverId, cause);
    void removeInBackground(this.job.clusterName, driverId, {
      ended: () => this.leftoverGone(driverId),
      host: this.host,
    });
  }

  /** A background removal ended: the job's `cleanup` note loses the driver while the job lives. */
  private async leftoverGone(driverId: string): Promise<void> {
    if (!this.leftovers.delete(driverId) || isTerminal(this.job.state)) return;
    await this.projectCleanup();
  }

  private async projectCleanup(): Promise<void> {
    const note = cleanupNote(this.leftovers);
    const next: Job = { ...this.job };
    if (note) next.cleanup = note;
    else delete next.cleanup;
    if (next.cleanup === this.job.cleanup) return;
    this.job = next;
    await this.project();
  }

  private async finish(state: JobState, error?: string): Promise<Job> {
    this.job = finishedJob(this.job, state, Date.now(), error);
    this.unreachable = undefined;
    await this.project();
    return this.job;
  }
}
