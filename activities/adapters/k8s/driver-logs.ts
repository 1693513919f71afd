// The logs of a k8s driver: read from its pods (driver, then executors by name) while the driver pod
// exists, else from what remove saved before deleting them (saved-logs.ts).
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import type { LogRange } from '../../../domain/driver';
import type { JobLogEntry } from '../../../domain/types';
import { logger } from '../../../lib/log';
import type { K8sContext } from './client';
import { CLUSTER_UNAVAILABLE, isNotFound, K8sApiError } from './errors';
import { DRIVER_CONTAINER, executorSelector, k8sNames } from './names';
import { logEntry, podLogEntry, podLogOrWhy } from './pod-logs';
import { readSavedLogs, saveLogs } from './saved-logs';

const log = logger('k8s-adapter');

/** Spark's driver container, or the one container of a pod that runs no Spark (a TRINO engine). */
function driverContainer(pod: V1Pod): string | undefined {
  const containers = pod.spec?.containers ?? [];
  return containers.some((c) => c.name === DRIVER_CONTAINER) ? DRIVER_CONTAINER : containers[0]?.name;
}

/** The driver pod and its executors (sorted by name); no driver pod: undefined. */
async function podsOf(k: K8sContext, api: CoreV1Api, driverId: string) {
  const { namespace, describe } = k;
  const n = k8sNames(driverId);
  let driver: V1Pod;
  try {
    driver = await api.readNamespacedPod({ name: n.pod, namespace });
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw describe(e, `read pod ${n.pod}`);
  }
  let executors: V1Pod[];
  try {
    executors = (await api.listNamespacedPod({ namespace, labelSelector: executorSelector(n) })).items;
  } catch (e) {
    throw describe(e, `list the executors of ${n.pod}`);
  }
  executors.sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
  return { driver, executors };
}

/**
 * The logs of the driver's pods, or what remove saved of them. A cluster that cannot be asked (down,
 * refusing our credentials) fails at once, non-retryable, with the API server's words: the API answers
 * 503 with them rather than retrying past its deadline.
 */
export async function driverLogs(k: K8sContext, driverId: string, range: LogRange): Promise<JobLogEntry[]> {
  try {
    const api = k.client();
    const pods = await podsOf(k, api, driverId);
    if (!pods) {
      const saved = k.logDir ? await readSavedLogs(k.logDir, driverId) : [];
      return saved.map((p) => logEntry(p.name, p.role, p.state, p.lines, range));
    }
    const r = { api, namespace: k.namespace, describe: k.describe, range };
    return await Promise.all([
      podLogEntry(r, pods.driver, 'driver', driverContainer(pods.driver)),
      ...pods.executors.map((p) => podLogEntry(r, p, 'executor', p.spec?.containers?.[0]?.name)),
    ]);
  } catch (e) {
    if (e instanceof K8sApiError) throw ApplicationFailure.nonRetryable(e.message, CLUSTER_UNAVAILABLE);
    throw e;
  }
}

/**
 * Saves what can be read of the logs of the driver's pods before remove deletes them, and never fails:
 * the deletes must go ahead whatever the logs do (a pod whose container never started has none; a
 * kubelet that does not answer, RBAC without pods/log). A pod's log that cannot be read is saved as one
 * line saying why; a driver pod already gone leaves an earlier save as it is. An API server that does not
 * answer saves nothing now: the deletes fail the same way and the remove is retried, saving then.
 */
export async function saveDriverLogs(k: K8sContext, driverId: string): Promise<void> {
  try {
    await trySave(k, driverId);
  } catch (e) {
    log.warn('could not save the logs of a driver before removing it', { driverId, error: e });
  }
}

async function trySave(k: K8sContext, driverId: string): Promise<void> {
  if (!k.logDir) return;
  const api = k.client();
  const pods = await podsOf(k, api, driverId);
  if (!pods) return;
  const src = { api, namespace: k.namespace, describe: k.describe };
  const all = [
    { pod: pods.driver, role: 'driver' as const, container: driverContainer(pods.driver) },
    ...pods.executors.map((pod) => ({ pod, role: 'executor' as const, container: pod.spec?.containers?.[0]?.name })),
  ];
  const saved = await Promise.all(
    all.map(async ({ pod, role, container }) => ({
      name: pod.metadata!.name!,
      role,
      state: pod.status?.phase ?? 'Unknown',
      lines: await podLogOrWhy(src, pod, container).catch((e: unknown) => [
        `(log not saved: ${e instanceof Error ? e.message : String(e)})`,
      ]),
    })),
  );
  await saveLogs(k.logDir, driverId, saved);
}
