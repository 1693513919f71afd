// What every piece of a driver's manifests reads, worked out once from the spec and the cluster.
import type { DriverSpec } from '../../../domain/driver';
import { directSecret } from '../../../lib/driver-secret';
import { artifactUris, mainResource, type ArtifactUris, type MainResource } from './artifacts';
import { k8sNames, specLabels, type K8sNames } from './names';
import {
  clusterNamespace,
  clusterSparkImage,
  DEFAULT_TRINO_IMAGE,
  type K8sCluster,
  type K8sStorage,
  type ManifestOptions,
} from './options';

export interface ManifestContext {
  spec: DriverSpec;
  cluster: K8sCluster;
  /** The Spark image of driver and executors: the cluster's sparkImage, else K8S_SPARK_IMAGE. */
  image: string;
  /** The image of TRINO engines. */
  trinoImage: string;
  /** Where the driver goes: its recorded placement, else the cluster's namespace, else K8S_NAMESPACE. */
  namespace: string;
  names: K8sNames;
  /** The cluster's storage artifacts come from (sparkStorage), if it has one. */
  storage?: K8sStorage;
  /** The storage has keys: a secret holds them and driver and executors read them from it. */
  hasKeys: boolean;
  /**
   * A runner's direct execute channel (runner/spark_runner/direct.py): the secret callers present, derived from
   * SECRET_KEY and the driver id. Kept in the driver's secret, never in the pod spec. Unset for applications,
   * or without SECRET_KEY (then the API executes through workflows).
   */
  directSecret?: string;
  /** Label key → value of the spec's ids (jobId, groupId, scheduleId). */
  idLabels: Record<string, string>;
  artifacts: ArtifactUris;
  main: MainResource;
}

/** Throws a non-retryable InvalidSpec failure for artifacts outside the store or no main resource. */
export function manifestContext(spec: DriverSpec, opts: ManifestOptions): ManifestContext {
  const { cluster, config } = opts;
  const storage = cluster.storages?.[cluster.sparkStorage ?? 's3'];
  const artifacts = artifactUris(spec, cluster, config.ARTIFACT_DIR);
  return {
    spec,
    cluster,
    image: clusterSparkImage(cluster, config),
    trinoImage: config.K8S_TRINO_IMAGE ?? DEFAULT_TRINO_IMAGE,
    namespace: opts.namespace ?? clusterNamespace(cluster, config),
    names: k8sNames(spec.driverId),
    storage,
    hasKeys: !!(storage?.accessKey || storage?.secretKey),
    directSecret:
      spec.role === 'runner' && config.SECRET_KEY ? directSecret(config.SECRET_KEY, spec.driverId) : undefined,
    idLabels: specLabels(spec.labels),
    artifacts,
    main: mainResource(spec, artifacts, opts.runnerPath),
  };
}
