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
  /** Key into `storages` of the storage artifacts are read from (default s3). */
  sparkStorage?: string;
  storages?: Record<string, K8sStorage>;
  /** Spark properties every driver gets, `key=value` separated by `;` or new lines; jobConfig wins. */
  defaultApplicationConfig?: string;
}

export interface K8sAdapterOptions {
  cluster: K8sCluster;
  /** K8S_TRINO_IMAGE may be left out: DEFAULT_TRINO_IMAGE. */
  config: Pick<Config, 'K8S_SPARK_IMAGE' | 'K8S_NAMESPACE' | 'ARTIFACT_DIR'> & Partial<Pick<Config, 'K8S_TRINO_IMAGE'>>;
  /** runner.py inside the Spark image (the image must contain it). Default DEFAULT_RUNNER_PATH. */
  runnerPath?: string;
  /** A request the API server has not answered within this time fails (status: UNKNOWN). Default 15000. */
  requestTimeoutMs?: number;
}

/** What the manifests depend on: no connection settings. */
export type ManifestOptions = Pick<K8sAdapterOptions, 'cluster' | 'config' | 'runnerPath'>;

/** Trino image of TRINO engines (K8S_TRINO_IMAGE's default in lib/config.ts): the version local clusters run. */
export const DEFAULT_TRINO_IMAGE = 'trinodb/trino:368';
export const DEFAULT_RUNNER_PATH = '/opt/spark-orchestrator/runner/runner.py';
/** hadoop-aws matching the Hadoop of the apache/spark 3.5 images; added when artifacts come from s3a. */
export const HADOOP_AWS_PACKAGE = 'org.apache.hadoop:hadoop-aws:3.3.4';
