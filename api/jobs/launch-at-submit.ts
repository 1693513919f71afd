// Launch at submit (LAUNCH_AT_SUBMIT): right after the durable start of a single job's workflow, the API launches the
// first try's driver itself, so the driver does not wait for the workflow's first task (its dispatch and the
// task cost 40–60 ms on a 2-core machine). The workflow's own launch, a moment later, finds that driver: a
// launch is idempotent per driverId (a local driver's folder is its lock; a pod's name is unique in its
// namespace), and the workflow watches, retries, stops and removes it as always.
//
// - A crash of the API at any point loses nothing: the workflow was started first, and launches anyway.
// - An early cancel or stop cannot leave a driver behind: a launch still under way when the workflow removes
//   the driver would create it after its removal. So once its launch has ended, the API reads the job back
//   and removes the driver itself when the job has moved past that try (ended, deleted, or on a later try).
//   The workflow writes CANCELED / FINISHED before it removes a driver, so one of the two removals comes
//   after the launch.
// - Failures are the workflow's to report (UNKNOWN with the cause, the launch deadline, InvalidSpec): here
//   they are logged at debug level and forgotten.
//
// LAUNCH_AT_SUBMIT chooses the clusters: `all`, `k8s` (an API on other hosts than the workers must not start
// a local cluster's drivers on its own host), `off`.
import type { Document } from 'mongodb';
import { clusterTypeOf } from '../../activities/adapters/cluster-types';
import type { AdapterLookup } from '../../activities/adapters/registry';
import type { ClusterAdapter } from '../../domain/driver';
import type { DriverHost } from '../../domain/hosts';
import { singleJobDriverSpec, type JobWorkflowInput } from '../../domain/job';
import { isTerminal, type JobState } from '../../domain/states';
import type { Config } from '../../lib/config';
import { logger } from '../../lib/log';
import { Collections, type Store } from '../../lib/mongo';

const log = logger('api.launch');

export interface LaunchAtSubmit {
  /**
   * Starts the first try's driver in the background. `recorded`: whether this API wrote the job's SUBMITTED
   * record (then a record missing after the launch means the job was deleted).
   */
  launch(jobId: string, clusterType: string, input: JobWorkflowInput, recorded: Promise<boolean>): void;
  /**
   * The host a launch from here puts a driver of this cluster type on (types whose drivers live on the
   * launching host: this API's WORKER_HOST), which the job's workflow must launch on too; none otherwise.
   */
  hostFor(clusterType: string): DriverHost | undefined;
  /** Waits (at most `ms`) for the launches under way, so a stopping API does not cut one short. */
  drain(ms: number): Promise<void>;
}

/** Whether the job, read back after its first driver's launch, no longer wants that driver (null: deleted). */
export function launchOutlived(job: { state: JobState; attempt: number } | null, recorded: boolean): boolean {
  if (!job) return recorded;
  return job.attempt !== 1 || isTerminal(job.state);
}

export function createLaunchAtSubmit(config: Config, store: Store, adapterFor: AdapterLookup): LaunchAtSubmit {
  const underWay = new Set<Promise<void>>();
  const wanted = (clusterType: string) =>
    config.LAUNCH_AT_SUBMIT === 'all' ||
    (config.LAUNCH_AT_SUBMIT === 'k8s' && !clusterTypeOf(clusterType).capabilities.driversOnWorkerHost);

  async function launchAndCheck(jobId: string, input: JobWorkflowInput, recorded: Promise<boolean>): Promise<void> {
    const spec = singleJobDriverSpec(jobId, 1, input);
    let adapter: ClusterAdapter | undefined;
    try {
      adapter = await adapterFor(input.spec.clusterName);
      await adapter.launch(spec);
    } catch (e) {
      // The workflow's own launch meets the same cause and reports it.
      log.debug('launch at submit failed; the workflow launches', { jobId, error: (e as Error).message });
      if (!adapter) return; // no adapter (the cluster is gone): nothing was created
    }
    // Launched or not, something may have been created: read the job back after the launch has ended.
    const wrote = await recorded;
    const job = await store
      .col(Collections.jobs)
      .findOne({ _id: jobId } as Document, { projection: { state: 1, attempt: 1 } });
    if (!launchOutlived(job as { state: JobState; attempt: number } | null, wrote)) return;
    log.info('job moved on while its driver was launched at submit; removing the driver', {
      jobId,
      driverId: spec.driverId,
    });
    await adapter.remove(spec.driverId);
  }

  return {
    hostFor: (clusterType) =>
      wanted(clusterType) && clusterTypeOf(clusterType).capabilities.driversOnWorkerHost
        ? { id: config.WORKER_HOST, absentMs: config.HOST_ABSENT_MS }
        : undefined,
    launch(jobId, clusterType, input, recorded) {
      if (!wanted(clusterType)) return;
      const p = launchAndCheck(jobId, input, recorded)
        .catch((e: unknown) =>
          log.warn('launch at submit: checking the job afterwards failed', { jobId, error: (e as Error).message }),
        )
        .finally(() => underWay.delete(p));
      underWay.add(p);
    },
    async drain(ms) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(underWay), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]).finally(
        () => clearTimeout(timer),
      );
    },
  };
}
