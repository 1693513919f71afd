// The state of one single job workflow and the steps of its life: launch a try, watch it, retry or
// finish, stop on request, clean up when cancelled. The state moves are pure functions in domain/.
import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  workflowInfo,
} from '@temporalio/workflow';
import type { DriverStatus } from '../domain/driver';
import { failureMessage } from '../domain/failure';
import { newJobRecord, singleJobDriverId, type JobWorkflowInput } from '../domain/job';
import {
  afterFailedTry,
  CANCELED_MESSAGE,
  failedTryReason,
  finishedJob,
  startingJob,
  tryOutcome,
  withDriverStatus,
} from '../domain/job-transitions';
import { JobState } from '../domain/states';
import type { Job } from '../domain/types';
import { drivers, projection, watch } from './activity-options';
import { setSearch } from './search';
import { WriteVersions } from './versions';

/** How a watched try ended: the job is done, or the try failed with this status. */
type TryEnd = { done: Job } | { failed: DriverStatus };

export class JobRun {
  job: Job;
  private readonly versions: WriteVersions;
  private projected: boolean;
  private stopRequested = false;

  constructor(
    private readonly input: JobWorkflowInput,
    readonly jobId: string,
  ) {
    this.job = input.resume?.job ?? newJobRecord(jobId, input, workflowInfo().runStartTime.getTime());
    this.versions = new WriteVersions(input.resume?.seq ?? 0);
    this.projected = input.resume !== undefined;
  }

  // ---- messages -----------------------------------------------------------------------------------
  async accepted(): Promise<{ jobId: string }> {
    await condition(() => this.projected);
    return { jobId: this.jobId };
  }

  requestStop(): void {
    this.stopRequested = true;
  }

  // ---- life ---------------------------------------------------------------------------------------
  /** Runs tries until the job is done; returns its final record. */
  async run(): Promise<Job> {
    const { job, input } = this;
    if (!input.resume) {
      setSearch({
        jobId: this.jobId,
        clusterName: job.clusterName,
        jobType: job.jobType,
        scheduleId: input.scheduleId,
        jobState: job.state,
      });
      await this.project();
    }
    // After continue-as-new the current try goes on: launching again finds its driver.
    let fresh = input.resume === undefined;
    for (;;) {
      let status: DriverStatus;
      try {
        status = await this.launch(fresh);
      } catch (e) {
        if (isCancellation(e)) throw e;
        return this.finish(JobState.FAILED, failureMessage(e));
      }
      fresh = true;
      const end = await this.watchTry(status);
      if ('done' in end) return end.done;
      await drivers.removeDriver(this.job.clusterName, this.driverId());
      const next = afterFailedTry(this.job, failedTryReason(end.failed), Date.now());
      this.job = next.job;
      if (!next.retry) {
        await this.project();
        return this.job;
      }
    }
  }

  /** Cleanup after cancellation (run it non-cancellable): the driver goes, even mid-launch. */
  async cancelled(): Promise<void> {
    await drivers.removeDriver(this.job.clusterName, this.driverId());
    await this.finish(JobState.CANCELED, CANCELED_MESSAGE);
  }

  private driverId(): string {
    return singleJobDriverId(this.jobId, this.job.attempt);
  }

  private async project(): Promise<void> {
    await projection.projectJob({ ...this.job }, this.versions.next());
    this.projected = true;
    setSearch({ jobState: this.job.state });
  }

  /** Launches the current try's driver. A fresh try is STARTING: the launch activity writes that record. */
  private launch(fresh: boolean): Promise<DriverStatus> {
    let starting: { job: Job; version: number } | undefined;
    if (fresh) {
      this.job = startingJob(this.job);
      starting = { job: { ...this.job }, version: this.versions.next() };
      setSearch({ jobState: this.job.state });
    }
    const { jobId, input } = this;
    const labels = { jobId, ...(input.scheduleId ? { scheduleId: input.scheduleId } : {}) };
    return drivers.launchDriver(
      this.job.clusterName,
      { driverId: this.driverId(), role: 'application', spark: input.spec, env: {}, labels },
      starting,
    );
  }

  /** Watches the current try until it ends or a stop is requested; continues as new when suggested. */
  private async watchTry(first: DriverStatus): Promise<TryEnd> {
    let status = first;
    for (;;) {
      this.job = withDriverStatus(this.job, status, Date.now());
      await this.project();
      const outcome = tryOutcome(status);
      if (outcome === 'succeeded') return { done: await this.removeAndFinish() };
      if (outcome === 'failed') return { failed: status };
      if (this.stopRequested) return { done: await this.removeAndFinish() };
      const scope = new CancellationScope();
      const next = scope.run(() => watch.watchDriver(this.job.clusterName, this.driverId(), status));
      await Promise.race([next, condition(() => this.stopRequested)]);
      if (this.stopRequested) {
        scope.cancel();
        return { done: await this.removeAndFinish() };
      }
      status = await next;
      if (workflowInfo().continueAsNewSuggested) {
        await condition(allHandlersFinished);
        await continueAsNew<(input: JobWorkflowInput) => Promise<Job>>({
          ...this.input,
          resume: { job: this.job, seq: this.versions.last },
        });
      }
    }
  }

  /** A succeeded or stopped try: its driver goes, the job is FINISHED. */
  private async removeAndFinish(): Promise<Job> {
    await drivers.removeDriver(this.job.clusterName, this.driverId());
    return this.finish(JobState.FINISHED);
  }

  private async finish(state: JobState, error?: string): Promise<Job> {
    this.job = finishedJob(this.job, state, Date.now(), error);
    await this.project();
    return this.job;
  }
}
