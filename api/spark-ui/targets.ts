// Where a running driver's Spark UI is reached, by how its cluster's type says (capabilities.sparkUi):
//   driver-folder (local)  the loopback port its launch recorded, sealed, in its folder (activities/adapters/local/spark-ui.ts)
//   pod (k8s)  the driver pod's IP on the UI port of its manifest (Ports.UI), as the API server reports the pod:
//          the API runs in the cluster (the chart), where pod IPs are reached directly and the drivers'
//          NetworkPolicy admits the service's own pods. The pod must carry the driver's label and be Running;
//          its IP comes from the pod's status, which its kubelet writes and no job may change.
//   null (yarn)  not proxied (yet): YARN's own web proxy serves an application's UI (docs/api.md)
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { Document } from 'mongodb';
import { CLUSTER_TYPE_DEFS, type StoredCluster } from '../../activities/adapters/cluster-types';
import { connect } from '../../activities/adapters/k8s/client';
import { k8sNames, Labels, Ports } from '../../activities/adapters/k8s/names';
import { clusterNamespace } from '../../activities/adapters/k8s/options';
import { readUiAddress, type UiAddress } from '../../activities/adapters/local/spark-ui';
import { mongoPlacements } from '../../activities/adapters/placements';
import type { ClusterType } from '../../domain/states';
import { unsealClusterSecrets } from '../../lib/cluster-secrets';
import { logger } from '../../lib/log';
import { Collections } from '../../lib/mongo';
import type { ApiDeps } from '../deps';

const log = logger('spark-ui');

/** Whose UI: a driver of a cluster, named as the job or engine record names it. */
export interface UiDriver {
  driverId: string;
  cluster: { name: string } | { id: string };
}

/** How long an answer about a k8s driver's pod is reused: a page loads several resources at once. */
const POD_TTL_MS = 5_000;
/** How long the API server may take to answer. */
const REQUEST_TIMEOUT_MS = 5_000;
const CACHE_MAX = 1_000;
const podCache = new Map<string, { at: number; address: Promise<UiAddress | undefined> }>();

type Deps = Pick<ApiDeps, 'store' | 'config'>;

/** The driver's UI address, or undefined when it has none this API can reach (not running, no UI recorded). */
export async function liveUiAddress(deps: Deps, d: UiDriver): Promise<UiAddress | undefined> {
  const cluster = await deps.store
    .col<StoredCluster>(Collections.clusters)
    .findOne(('name' in d.cluster ? { name: d.cluster.name } : { id: d.cluster.id }) as Document);
  // A cluster since deleted: a local driver's folder is all there may be (its seal says whose it is). A type this
  // version does not know (a document of a newer one): no UI.
  const type = (cluster?.type ?? 'local') as ClusterType;
  const how = CLUSTER_TYPE_DEFS[type]?.capabilities.sparkUi ?? null;
  switch (how) {
    case 'driver-folder':
      return readUiAddress(path.join(deps.config.DRIVER_DIR, d.driverId), d.driverId, deps.config.SECRET_KEY);
    case 'pod':
      return k8sPodUi(deps, cluster!, d.driverId);
    case null:
      return undefined;
    default:
      return unknownWay(how);
  }
}

/** Typed so a new way must be named above. */
const unknownWay = (_how: never): undefined => undefined;

function k8sPodUi(deps: Deps, doc: StoredCluster, driverId: string): Promise<UiAddress | undefined> {
  // A new document (new address, credentials) is another key: nothing is reused across a change.
  const key = `${doc.id}\n${JSON.stringify(doc)}\n${driverId}`;
  const hit = podCache.get(key);
  if (hit && Date.now() - hit.at < POD_TTL_MS) return hit.address;
  if (podCache.size >= CACHE_MAX) podCache.clear();
  const address = readPodUi(deps, doc, driverId);
  podCache.set(key, { at: Date.now(), address });
  return address;
}

async function readPodUi(deps: Deps, doc: StoredCluster, driverId: string): Promise<UiAddress | undefined> {
  const cluster = unsealClusterSecrets(deps.config.SECRET_KEY, doc);
  // Where its launch put it (placements.ts), else where its cluster puts drivers now.
  const namespace =
    (await mongoPlacements(deps.store, String(doc.id)).get(driverId)) ?? clusterNamespace(cluster, deps.config);
  const names = k8sNames(driverId);
  const conn = connect(cluster, namespace, REQUEST_TIMEOUT_MS);
  try {
    const pod = await conn.client().readNamespacedPod({ name: names.pod, namespace });
    const ip = pod.status?.podIP;
    if (pod.metadata?.labels?.[Labels.DRIVER_ID] !== names.base || pod.status?.phase !== 'Running' || !ip) {
      return undefined;
    }
    return { host: ip, port: Ports.UI };
  } catch (e) {
    // Gone, not yet created, or the API server does not answer: no UI to show now. Said once in the log,
    // without credentials (the connection scrubs its messages).
    const message = e instanceof ApplicationFailure ? e.message : conn.describe(e, `read pod ${names.pod}`).message;
    log.debug('no Spark UI for a k8s driver', { driverId, cluster: doc.name, error: message });
    return undefined;
  }
}
