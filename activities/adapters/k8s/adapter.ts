// The k8s cluster adapter. A driver is a pod running spark-submit in client mode, beside a headless
// service (executors reach the driver through its DNS name) and, when the cluster's storage has keys,
// a secret holding them. SQL engines add a ClusterIP service for clients, and a TRINO engine is a Trino
// pod with a ConfigMap instead (sql-engine.ts). Every name derives from the driverId (names.ts), so a
// retried launch finds what the first one created instead of starting a second driver. Phases: status.ts.
import type { V1ConfigMap, V1Pod, V1Service } from '@kubernetes/client-node';
import {
  DriverPhase,
  type ClusterAdapter,
  type DriverSpec,
  type DriverStatus,
  type LogRange,
} from '../../../domain/driver';
import type { JobLogEntry } from '../../../domain/types';
import { logger } from '../../../lib/log';
import { connect, type K8sConnection } from './client';
import { codeOf, isNotFound } from './errors';
import { buildDriverManifests } from './manifests';
import { DRIVER_CONTAINER, executorSelector, k8sNames, type K8sNames } from './names';
import type { K8sAdapterOptions } from './options';
import { podLogEntry } from './pod-logs';
import { withEndpoint } from './sql-engine';
import { podStatus } from './status';
import { validateManifests } from './validate';

const log = logger('k8s-adapter');
const DELETE_GRACE_SECONDS = 5;

/** What each operation needs: the connection, the namespace, and the options manifests are built with. */
interface K8sContext extends K8sConnection {
  namespace: string;
  opts: K8sAdapterOptions;
}

export function createK8sAdapter(opts: K8sAdapterOptions): ClusterAdapter {
  const namespace = opts.config.K8S_NAMESPACE;
  const k: K8sContext = { ...connect(opts.cluster, namespace, opts.requestTimeoutMs ?? 15_000), namespace, opts };
  return {
    launch: (spec) => launch(k, spec),
    status: (driverId) => status(k, driverId),
    logs: (driverId, range) => logs(k, driverId, range),
    remove: (driverId) => remove(k, driverId),
  };
}

/** Creates an object unless it exists (409): the deterministic name makes a retry a no-op. */
async function ensure(k: K8sContext, what: string, create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (e) {
    if (codeOf(e) !== 409) throw k.fail(e, what);
  }
}

async function ignoreMissing(k: K8sContext, what: string, del: () => Promise<unknown>): Promise<void> {
  try {
    await del();
  } catch (e) {
    if (!isNotFound(e)) throw k.fail(e, what);
  }
}

async function launch(k: K8sContext, spec: DriverSpec): Promise<DriverStatus> {
  const { namespace } = k;
  const m = buildDriverManifests(spec, k.opts);
  await validateManifests(m);
  const api = k.client();
  const n = m.names;
  const createService = (body: V1Service) =>
    ensure(k, `create service ${body.metadata!.name}`, () => api.createNamespacedService({ namespace, body }));
  const createConfigMap = (body: V1ConfigMap) => api.createNamespacedConfigMap({ namespace, body });
  // What the pod mounts or is reached through comes first.
  await Promise.all([
    m.secret
      ? ensure(k, `create secret ${n.secret}`, () => api.createNamespacedSecret({ namespace, body: m.secret! }))
      : undefined,
    m.configMap ? ensure(k, `create configmap ${n.configMap}`, () => createConfigMap(m.configMap!)) : undefined,
    m.service ? createService(m.service) : undefined,
    m.engineService ? createService(m.engineService) : undefined,
  ]);
  let pod: V1Pod;
  try {
    pod = await api.createNamespacedPod({ namespace, body: m.pod });
    log.debug('driver pod created', { driverId: spec.driverId, pod: n.pod, namespace });
  } catch (e) {
    if (codeOf(e) !== 409) throw k.fail(e, `create pod ${n.pod}`);
    try {
      pod = await api.readNamespacedPod({ name: n.pod, namespace });
    } catch (e2) {
      throw k.fail(e2, `read pod ${n.pod}`);
    }
  }
  return driverStatus(k, pod, n);
}

/** The pod's status, with an SQL engine's endpoint once it runs. */
const driverStatus = (k: K8sContext, pod: V1Pod, n: K8sNames): DriverStatus =>
  withEndpoint(podStatus(pod), pod, n, k.namespace);

async function status(k: K8sContext, driverId: string): Promise<DriverStatus> {
  const n = k8sNames(driverId);
  try {
    return driverStatus(k, await k.client().readNamespacedPod({ name: n.pod, namespace: k.namespace }), n);
  } catch (e) {
    if (isNotFound(e)) return { phase: DriverPhase.MISSING };
    return { phase: DriverPhase.UNKNOWN, message: k.describe(e, `read pod ${n.pod}`).message };
  }
}

async function logs(k: K8sContext, driverId: string, range: LogRange): Promise<JobLogEntry[]> {
  const { namespace, describe } = k;
  const n = k8sNames(driverId);
  const api = k.client();
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
    podLogEntry(r, driver, 'driver', driverContainer(driver)),
    ...executors.map((p) => podLogEntry(r, p, 'executor', p.spec?.containers?.[0]?.name)),
  ]);
}

/** Spark's driver container, or the one container of a pod that runs no Spark (a TRINO engine). */
function driverContainer(pod: V1Pod): string | undefined {
  const containers = pod.spec?.containers ?? [];
  return containers.some((c) => c.name === DRIVER_CONTAINER) ? DRIVER_CONTAINER : containers[0]?.name;
}

async function remove(k: K8sContext, driverId: string): Promise<void> {
  const { namespace } = k;
  const n = k8sNames(driverId);
  const api = k.client();
  const results = await Promise.allSettled([
    ignoreMissing(k, `delete pod ${n.pod}`, () =>
      api.deleteNamespacedPod({
        name: n.pod,
        namespace,
        gracePeriodSeconds: DELETE_GRACE_SECONDS,
        propagationPolicy: 'Background',
      }),
    ),
    // Spark deletes its executors when the driver stops; a killed driver leaves them to us.
    ignoreMissing(k, `delete the executors of ${n.pod}`, () =>
      api.deleteCollectionNamespacedPod({
        namespace,
        labelSelector: executorSelector(n),
        gracePeriodSeconds: DELETE_GRACE_SECONDS,
      }),
    ),
    ignoreMissing(k, `delete service ${n.service}`, () => api.deleteNamespacedService({ name: n.service, namespace })),
    ignoreMissing(k, `delete secret ${n.secret}`, () => api.deleteNamespacedSecret({ name: n.secret, namespace })),
    // An SQL engine's: asked of every driver, since a pod already gone no longer says what it was.
    ignoreMissing(k, `delete service ${n.engineService}`, () =>
      api.deleteNamespacedService({ name: n.engineService, namespace }),
    ),
    // Forbidden too: a cluster whose role grants no ConfigMaps (set up before SQL engines) never got one.
    ignoreMissing(k, `delete configmap ${n.configMap}`, () =>
      api.deleteNamespacedConfigMap({ name: n.configMap, namespace }).catch((e: unknown) => {
        if (codeOf(e) === 403) return undefined;
        throw e;
      }),
    ),
  ]);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}
