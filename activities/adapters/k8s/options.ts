// What the k8s adapter is given: the cluster document (secrets decrypted) and the worker's settings.
import type { Config } from '../../../lib/config';

/** One storage of a cluster (its secrets decrypted). */
export interface K8sStorage {
  sparkBucket?: string;
  dataBucket?: string;
  endpoint?: string;
  region?: string;
  accessKey?: string;
  secretKey?: string;
}

/** The fields of a k8s cluster document the adapter needs, with every secret decrypted. */
export interface K8sCluster {
  name: string;
  /** API server URL, https://host:port (http only for a local fake or proxy). */
  url: string;
  /** PEM (or base64 of PEM, as in a kubeconfig) of the CA that signed the API server's certificate. */
  caCert?: string;
  clientCert?: string;
  clientKey?: string;
  /** Decrypts an encrypted (PKCS#8 or traditional PEM) clientKey. */
  clientKeyPassphrase?: string;
  username?: string;
  password?: string;
  /** Bearer token (a service account token, or what EKS, GKE and AKS issue); sent as `Authorization: Bearer`. */
  token?: string;
  /**
   * host:port of the Temporal frontend as seen from inside the cluster: runners of group drivers connect
   * to it. Default: the worker's TEMPORAL_ADDRESS, unless that is a loopback address (a pod's own).
   */
  temporalAddress?: string;
  /** Key into `storages` of the storage artifacts are read from (default s3). */
  sparkStorage?: string;
  storages?: Record<string, K8sStorage>;
  /** Spark properties every driver gets, `key=value` separated by `;` or new lines; jobConfig wins. */
  defaultApplicationConfig?: string;
  /** Kinds of access-granting Spark settings the cluster allows (domain/access-settings.ts); none when absent. */
  allowedAccessSettings?: string[];
  /** Namespace of new drivers; default the worker's K8S_NAMESPACE. */
  namespace?: string;
  /** Spark image of drivers and executors; default the worker's K8S_SPARK_IMAGE. */
  sparkImage?: string;
}

/**
 * Where each driver of a cluster was launched. A driver stays in the namespace it was launched in: a cluster
 * whose namespace changes sends new drivers to the new one, while the running ones are still watched, read
 * and removed where they are.
 */
export interface DriverPlacements {
  /** The namespace recorded for the driver; else records `namespace` for it and returns that. */
  place(driverId: string, namespace: string): Promise<string>;
  /** The namespace recorded for the driver, if any. */
  get(driverId: string): Promise<string | undefined>;
  /** Drops the record once the driver is removed. */
  forget(driverId: string): Promise<void>;
}

/** Placements kept in this process only (tests, tools): enough while one adapter serves the cluster. */
export function memoryPlacements(): DriverPlacements {
  const m = new Map<string, string>();
  return {
    place: async (id, ns) => {
      if (!m.has(id)) m.set(id, ns);
      return m.get(id)!;
    },
    get: async (id) => m.get(id),
    forget: async (id) => void m.delete(id),
  };
}

export interface K8sAdapterOptions {
  cluster: K8sCluster;
  /** K8S_TRINO_IMAGE may be left out: DEFAULT_TRINO_IMAGE. */
  config: Pick<Config, 'K8S_SPARK_IMAGE' | 'K8S_NAMESPACE' | 'ARTIFACT_DIR'> &
    Partial<Pick<Config, 'K8S_TRINO_IMAGE' | 'STACK_DIR' | 'SECRET_KEY' | 'SPARK_HISTORY_DIR'>>;
  /** runner.py inside the Spark image (the image must contain it). Default DEFAULT_RUNNER_PATH. */
  runnerPath?: string;
  /** A request the API server has not answered within this time fails (status: UNKNOWN). Default 15000. */
  requestTimeoutMs?: number;
  /** How long a pod may fail to pull its image (ErrImagePull, ImagePullBackOff) before the driver FAILS. Default 300000. */
  imagePullGraceMs?: number;
  /** Where remove saves the pods' logs. Default: STACK_DIR/k8s-logs; neither: logs are not saved. */
  logDir?: string;
  /** Artifact uploads (and event log copies) go here instead of an S3 client built from the storage (tests). */
  objectStore?: ObjectStore;
  /** Where drivers were launched (kept across adapters of the cluster). Default: memoryPlacements(). */
  placements?: DriverPlacements;
}

/** Where artifacts are uploaded for the pods: the cluster's storage bucket (artifact-store.ts). */
export interface ObjectStore {
  /** Uploads the file unless the bucket holds an object of the same size under that key. */
  put(bucket: string, key: string, file: string): Promise<void>;
  /** Deletes every object under the prefix. */
  deletePrefix(bucket: string, prefix: string): Promise<void>;
  /** Makes the prefix (ending in /) a folder to Hadoop's s3a: an empty object under that key. */
  ensureFolder(bucket: string, prefix: string): Promise<void>;
  /** Writes the object to the file; false when there is none under the key. */
  get(bucket: string, key: string, file: string): Promise<boolean>;
}

/**
 * What the manifests depend on: no connection settings. `namespace`: where the driver goes (its recorded
 * placement); default the cluster's namespace, else K8S_NAMESPACE.
 */
export type ManifestOptions = Pick<K8sAdapterOptions, 'cluster' | 'config' | 'runnerPath'> & { namespace?: string };

/** The namespace new drivers of the cluster go to. */
export const clusterNamespace = (cluster: K8sCluster, config: Pick<Config, 'K8S_NAMESPACE'>): string =>
  cluster.namespace || config.K8S_NAMESPACE;

/** The Spark image of the cluster's drivers and executors (a job's own image property still wins). */
export const clusterSparkImage = (cluster: K8sCluster, config: Pick<Config, 'K8S_SPARK_IMAGE'>): string =>
  cluster.sparkImage || config.K8S_SPARK_IMAGE;

/** Trino image of TRINO engines (K8S_TRINO_IMAGE's default in lib/config.ts): the version local clusters run. */
export const DEFAULT_TRINO_IMAGE = 'trinodb/trino:368';
export const DEFAULT_RUNNER_PATH = '/opt/spark-orchestrator/runner/runner.py';
/**
 * hadoop-aws matching the Hadoop of the apache/spark 3.5 images; added with --packages when artifacts come
 * from s3a and the image is a stock apache/spark one (the driver image of deploy/docker has it in its jars).
 */
export const HADOOP_AWS_PACKAGE = 'org.apache.hadoop:hadoop-aws:3.3.4';
