// The k8s cluster adapter. A driver is a pod running spark-submit in client mode, beside a headless
// service (executors reach the driver through its DNS name) and, when the cluster's storage has keys,
// a secret holding them. Every name derives from the driverId (names.ts), so a retried launch finds
// what the first one created instead of starting a second driver. Phases: status.ts.
import type { V1Pod } from '@kubernetes/client-node';
import { DriverPhase, type ClusterAdapter, type DriverSpec, type DriverStatus, type LogRange } from '../../../domain/driver';
import type { JobLogEntry } from '../../../domain/types';
import { logger } from '../../../lib/log';
import { connect } from './client';
import { codeOf, isNotFound } from './errors';
import { buildDriverManifests } from './manifests';
import { DRIVER_CONTAINER, executorSelector, k8sNames } from './names';
import type { K8sAdapterOptions } from './options';
import { podLogEntry } from './pod-logs';
import { podStatus } from './status';
import { validateManifests } from './validate';

const log = logger('k8s-adapter');
const DELETE_GRACE_SECONDS = 5;

export function createK8sAdapter(opts: K8sAdapterOptions): ClusterAdapter {
  const namespace = opts.config.K8S_NAMESPACE;
  const { client, describe, fail } = connect(opts.cluster, namespace, opts.requestTimeoutMs ?? 15_000);

  /** Creates an object unless it exists (409): the deterministic name makes a retry a no-op. */
  const ensure = async (what: string, create: () => Promise<unknown>) => {
    try {
      await create();
    } catch (e) {
      if (codeOf(e) !== 409) throw fail(e, what);
    }
  };

  const ignoreMissing = async (what: string, del: () => Promise<unknown>) => {
    try {
      await del();
    } catch (e) {
      if (!isNotFound(e)) throw fail(e, what);
    }
  };

  async function launch(spec: DriverSpec): Promise<DriverStatus> {
    const m = buildDriverManifests(spec, opts);
    await validateManifests(m);
    const api = client();
    const n = m.names;
    await Promise.all([
      m.secret ? ensure(`create secret ${n.secret}`, () => api.createNamespacedSecret({ namespace, body: m.secret! })) : undefined,
      ensure(`create service ${n.service}`, () => api.createNamespacedService({ namespace, body: m.service })),
    ]);
    let pod: V1Pod;
    try {
      pod = await api.createNamespacedPod({ namespace, body: m.pod });
      log.debug('driver pod created', { driverId: spec.driverId, pod: n.pod, namespace });
    } catch (e) {
      if (codeOf(e) !== 409) throw fail(e, `create pod ${n.pod}`);
      try {
        pod = await api.readNamespacedPod({ name: n.pod, namespace });
      } catch (e2) {
        throw fail(e2, `read pod ${n.pod}`);
      }
    }
    return podStatus(pod);
  }

  async function status(driverId: string): Promise<DriverStatus> {
    const n = k8sNames(driverId);
    try {
      return podStatus(await client().readNamespacedPod({ name: n.pod, namespace }));
    } catch (e) {
      if (isNotFound(e)) return { phase: DriverPhase.MISSING };
      return { phase: DriverPhase.UNKNOWN, message: describe(e, `read pod ${n.pod}`).message };
    }
  }

  async function logs(driverId: string, range: LogRange): Promise<JobLogEntry[]> {
    const n = k8sNames(driverId);
    const api = client();
    let driver: V1Pod;
    try {
      driver = await api.readNamespacedPod({ name: n.pod, namespace });
    } catch (e) {
      if (isNotFound(e)) return [];
      throw describe(e, `read pod ${n.pod}`);
    }
    let executors: V1Pod[];
    try {
      executors = (await api.listNamespacedPod({ namespace, labelSelector: executorSelector(n) })).items;
    } catch (e) {
      throw describe(e, `list the executors of ${n.pod}`);
    }
    executors.sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
    const r = { api, namespace, describe, range };
    return Promise.all([
      podLogEntry(r, driver, 'driver', DRIVER_CONTAINER),
      ...executors.map((p) => podLogEntry(r, p, 'executor', p.spec?.containers?.[0]?.name)),
    ]);
  }

  async function remove(driverId: string): Promise<void> {
    const n = k8sNames(driverId);
    const api = client();
    const results = await Promise.allSettled([
      ignoreMissing(`delete pod ${n.pod}`, () =>
        api.deleteNamespacedPod({ name: n.pod, namespace, gracePeriodSeconds: DELETE_GRACE_SECONDS, propagationPolicy: 'Background' }),
      ),
      // Spark deletes its executors when the driver stops; a killed driver leaves them to us.
      ignoreMissing(`delete the executors of ${n.pod}`, () =>
        api.deleteCollectionNamespacedPod({ namespace, labelSelector: executorSelector(n), gracePeriodSeconds: DELETE_GRACE_SECONDS }),
      ),
      ignoreMissing(`delete service ${n.service}`, () => api.deleteNamespacedService({ name: n.service, namespace })),
      ignoreMissing(`delete secret ${n.secret}`, () => api.deleteNamespacedSecret({ name: n.secret, namespace })),
    ]);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  return { launch, status, logs, remove };
}
