// The k8s cluster adapter. A driver is a pod running spark-submit in client mode, beside a headless
// service (executors reach the driver through its DNS name) and, when the cluster's storage has keys,
// a secret holding them. SQL engines add a ClusterIP service for clients, and a TRINO engine is a Trino
// pod with a ConfigMap instead (sql-engine.ts). Every name derives from the driverId (names.ts), so a
// retried launch finds what the first one created instead of starting a second driver. Before the pod,
// launch uploads the driver's artifacts to the cluster's storage (artifact-store.ts); before deleting the
// pods, remove saves their logs (driver-logs.ts), so they stay readable. Phases: status.ts.
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { V1ConfigMap, V1Pod, V1Service } from '@kubernetes/client-node';
import { DriverPhase, type ClusterAdapter, type DriverSpec, type DriverStatus } from '../../../domain/driver';
import { logger } from '../../../lib/log';
import { s3ObjectStore, uploadArtifacts } from './artifact-store';
import { connect, type K8sContext } from './client';
import { driverLogs, saveDriverLogs } from './driver-logs';
import { EVENT_LOG_PREFIX, objectStoreOf, saveEventLog } from './event-logs';
import { codeOf, isNotFound } from './errors';
import { buildDriverManifests, type DriverManifests } from './manifests';
import { executorSelector, k8sNames, type K8sNames } from './names';
import { forClient } from './network-policy';
import { clusterNamespace, memoryPlacements, type K8sAdapterOptions } from './options';
import { withConnectEndpoint } from './connect-server';
import { withEndpoint } from './sql-engine';
import { podStatus } from './status';
import { validateManifests } from './validate';

const log = logger('k8s-adapter');
const DELETE_GRACE_SECONDS = 5;

export function createK8sAdapter(opts: K8sAdapterOptions): ClusterAdapter {
  // Where new drivers go; each launched driver is recorded with its own (placements), which wins after.
  const namespace = clusterNamespace(opts.cluster, opts.config);
  const { STACK_DIR } = opts.config;
  const k: K8sContext = {
    ...connect(opts.cluster, namespace, opts.requestTimeoutMs ?? 15_000),
    namespace,
    opts,
    logDir: opts.logDir ?? (STACK_DIR ? path.join(STACK_DIR, 'k8s-logs') : undefined),
    placements: opts.placements ?? memoryPlacements(),
  };
  /** The context of a driver already launched: its recorded namespace, else (no record) the cluster's. */
  const of = async (driverId: string): Promise<K8sContext> => {
    const ns = await k.placements.get(driverId);
    return ns && ns !== namespace ? { ...k, namespace: ns } : k;
  };
  return {
    launch: (spec) => launch(k, spec),
    status: async (driverId) => status(await of(driverId), driverId),
    logs: async (driverId, range) => driverLogs(await of(driverId), driverId, range),
    remove: async (driverId) => {
      await remove(await of(driverId), driverId);
      await k.placements.forget(driverId);
    },
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
    // Retried, whatever the status: the objects were created by us, so leaving them is not an option.
    if (!isNotFound(e)) throw k.describe(e, what);
  }
}

async function launch(cluster: K8sContext, spec: DriverSpec): Promise<DriverStatus> {
  // Recorded before anything is created, so whatever this launch makes is found again there, also by a
  // retried launch after the cluster's namespace changed.
  const namespace = await cluster.placements.place(spec.driverId, cluster.namespace);
  const k = namespace === cluster.namespace ? cluster : { ...cluster, namespace };
  const m = buildDriverManifests(spec, { ...k.opts, namespace });
  await validateManifests(m);
  const api = k.client();
  const n = m.names;
  // A driver launched already (the API's launch at submit, a retried activity) is one read away; its objects
  // follow the pod (they are owned by it), so only a pod still Pending may lack some.
  const existing = await api.readNamespacedPod({ name: n.pod, namespace }).catch((e: unknown) => {
    if (isNotFound(e)) return undefined;
    throw k.fail(e, `read pod ${n.pod}`);
  });
  if (existing) {
    // A launch that stopped between the pod and its objects (a crash, a refused create) finishes them here.
    if (existing.status?.phase === 'Pending' && !existing.metadata?.deletionTimestamp)
      await createOwned(k, m, existing);
    return driverStatus(k, existing, n);
  }
  await uploadFor(cluster, m);
  if (m.eventLogBucket) await eventLogFolder(cluster, m.eventLogBucket);
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
  await createOwned(k, m, pod);
  return driverStatus(k, pod, n);
}

/**
 * The driver's secret, config map, services and NetworkPolicy, owned by its pod (ownerReferences): the
 * cluster's garbage collector deletes them with the pod, whoever deletes it, so none outlives its driver.
 * They come after the pod since an owner reference needs its uid; the kubelet waits for the secret and
 * config map a pod refers to, and the driver listens only once its container has started.
 */
async function createOwned(k: K8sContext, m: DriverManifests, pod: V1Pod): Promise<void> {
  const { namespace } = k;
  const api = k.client();
  const n = m.names;
  const ownerReferences = [{ apiVersion: 'v1', kind: 'Pod', name: pod.metadata!.name!, uid: pod.metadata!.uid! }];
  const owned = <T extends { metadata?: object }>(o: T): T => ({ ...o, metadata: { ...o.metadata, ownerReferences } });
  const createService = (body: V1Service) =>
    ensure(k, `create service ${body.metadata!.name}`, () =>
      api.createNamespacedService({ namespace, body: owned(body) }),
    );
  const createConfigMap = (body: V1ConfigMap) => api.createNamespacedConfigMap({ namespace, body: owned(body) });
  await Promise.all([
    m.secret
      ? ensure(k, `create secret ${n.secret}`, () => api.createNamespacedSecret({ namespace, body: owned(m.secret!) }))
      : undefined,
    m.configMap ? ensure(k, `create configmap ${n.configMap}`, () => createConfigMap(m.configMap!)) : undefined,
    m.service ? createService(m.service) : undefined,
    ensure(k, `create networkpolicy ${n.networkPolicy}`, () =>
      k.networking().createNamespacedNetworkPolicy({ namespace, body: owned(forClient(m.networkPolicy)) }),
    ),
    m.engineService ? createService(m.engineService) : undefined,
  ]);
}

/** Uploads the artifacts the pod reads from the cluster's storage (objects already there are skipped). */
async function uploadFor(k: K8sContext, m: DriverManifests): Promise<void> {
  const { bucket, uploads, storage } = m.artifacts;
  if (!bucket || uploads.length === 0) return;
  // One client per adapter: the storage is the cluster document's, which a new adapter replaces.
  k.objectStore ??= k.opts.objectStore ?? s3ObjectStore(storage ?? {});
  await uploadArtifacts(k.objectStore, bucket, uploads, k.scrub);
  log.debug('artifacts uploaded', { bucket, count: uploads.length });
}

/**
 * Spark refuses an event log folder that does not exist, and to s3a an empty prefix does not: an empty
 * marker object makes it one. Put before every launch: s3a deletes the marker when a driver writes its log
 * under it, so once removal has taken the last log away the folder is gone again. Failing it fails the
 * launch as an upload would.
 */
async function eventLogFolder(k: K8sContext, bucket: string): Promise<void> {
  try {
    await objectStoreOf(k).ensureFolder(bucket, EVENT_LOG_PREFIX);
  } catch (e) {
    throw ApplicationFailure.retryable(
      k.scrub(`making s3a://${bucket}/${EVENT_LOG_PREFIX} for the driver's event log failed: ${(e as Error).message}`),
      'ArtifactUpload',
    );
  }
}

/** The pod's status, with an SQL engine's or a Connect server's endpoint once it runs. */
const driverStatus = (k: K8sContext, pod: V1Pod, n: K8sNames): DriverStatus =>
  withConnectEndpoint(
    withEndpoint(podStatus(pod, { imagePullGraceMs: k.opts.imagePullGraceMs }), pod, n, k.namespace),
    pod,
  );

async function status(k: K8sContext, driverId: string): Promise<DriverStatus> {
  const n = k8sNames(driverId);
  try {
    return driverStatus(k, await k.client().readNamespacedPod({ name: n.pod, namespace: k.namespace }), n);
  } catch (e) {
    if (isNotFound(e)) return { phase: DriverPhase.MISSING };
    return { phase: DriverPhase.UNKNOWN, message: k.describe(e, `read pod ${n.pod}`).message };
  }
}

async function remove(k: K8sContext, driverId: string): Promise<void> {
  const { namespace } = k;
  const n = k8sNames(driverId);
  const api = k.client();
  await Promise.all([saveDriverLogs(k, driverId), saveEventLog(k, driverId)]);
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
    ignoreMissing(k, `delete networkpolicy ${n.networkPolicy}`, () =>
      k.networking().deleteNamespacedNetworkPolicy({ name: n.networkPolicy, namespace }),
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
