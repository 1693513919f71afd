// The seam of a cluster type: everything the service knows about one `type` of cluster lives in the type's
// folder (activities/adapters/<type>/cluster-type.ts) as one ClusterTypeDef: the settings a client may send
// for it, their rules, what the response derives from them (sparkMaster, deploy mode), what a request counts
// against its resourceQuota, and what it can do (capabilities, which the API and the console read).
// cluster-types.ts lists one per ClusterType, and cluster-adapters.ts the adapter each type's drivers are
// launched with (apart, so that what only checks or shows clusters does not load every transport): a new type
// is a new folder plus one line in each, and the compiler names whatever the new type leaves out.
import type { z } from 'zod';
import type { MemorySettings, Storage } from '../../domain/resources';
import type { ClusterType, SqlEngine } from '../../domain/states';
import type { Config } from '../../lib/config';
import type { DriverPlacements } from './k8s/options';

/** The fields every cluster has, whatever its type, as stored in the `clusters` collection (secrets sealed). */
export type StoredClusterBase = {
  _id: string;
  id: string;
  name: string;
  type: ClusterType;
  /** Where the cluster is reached: the Kubernetes API server, the YARN ResourceManager's web address; `local`. */
  url: string;
  description?: string;
  storages?: Record<string, Storage>;
  sparkStorage?: string;
  metastoreName?: string;
  memorySettings?: MemorySettings;
  defaultApplicationConfig?: string;
  resourceQuota?: Record<string, string>;
  limitRange?: Record<string, Record<string, string>>;
  createdTime: number;
};

/** What a cluster type can do: the API refuses what it cannot (409), the console hides it. */
export interface ClusterCapabilities {
  /** Its drivers go to namespaces (POST /cluster/namespace). */
  namespaces: boolean;
  /** SQL engine types it can launch. */
  sqlEngines: readonly SqlEngine[];
  /** Spark Connect servers. */
  connect: boolean;
  /** Its drivers run on the worker's host: only a worker may launch them (LAUNCH_AT_SUBMIT=k8s skips them). */
  driversOnWorkerHost: boolean;
  /**
   * How the API reaches a running driver's Spark UI (api/spark-ui/targets.ts): `driver-folder`, the loopback port
   * sealed in its folder on this host; `pod`, the driver pod's IP; null: not proxied.
   */
  sparkUi: 'driver-folder' | 'pod' | null;
}

/** What a request asks of a cluster, for its resourceQuota. */
export interface QuotaNeed {
  cpu: number;
  /** Bytes. */
  memory: number;
  /** Pods (k8s) or containers (YARN): the driver and its executors. */
  pods: number;
}

export interface AdapterContext<S extends z.ZodRawShape = z.ZodRawShape> {
  /** The stored cluster, secrets decrypted. */
  cluster: StoredOf<S>;
  config: Config;
  /** Where its drivers were launched, kept per cluster id across the adapters of its document's versions. */
  placements: DriverPlacements;
}

export interface ClusterTypeDef<S extends z.ZodRawShape = z.ZodRawShape> {
  /** What its drivers are, in a few words for a form's list of types. */
  title: string;
  /** What its `url` is, in a form's words (Kubernetes API server URL); absent: the type sets it itself. */
  url?: string;
  /** Fields of the create and update bodies only clusters of this type have (another type's answer 400). */
  settings: S;
  /** Rules of a whole cluster of this type (create, and an update merged with the stored one): issues are 400s. */
  check(c: Partial<StoredOf<S>>, ctx: z.RefinementCtx): void;
  /** Stored fields filled in when absent (a local cluster's url). */
  defaults(c: Partial<StoredOf<S>>): Partial<StoredOf<S>>;
  /** The Spark master URL and deploy mode its drivers run with, as the Cluster resource shows them. */
  sparkMaster(c: StoredOf<S>, config: Pick<Config, 'LOCAL_SPARK_THREADS'>): string;
  sparkDeployMode: 'client' | 'cluster';
  /**
   * Its own fields of the Cluster resource (responses, secrets masked), as toView returns them: the API's response
   * schema (ClusterView, cluster-types.ts) is the common fields of domain/resources.ts plus every type's view.
   */
  view: z.ZodRawShape;
  /** The type's own fields of the Cluster resource, secrets masked (`view` says their shape). */
  toView(c: StoredOf<S>, config: Pick<Config, 'LOCAL_SPARK_THREADS'>): Record<string, unknown>;
  /**
   * Spark settings of a request (`field`: jobConfig, defaultApplicationConfig, ...) this cluster refuses:
   * a message for a 409, or undefined.
   */
  refusedConf(c: StoredOf<S>, conf: Record<string, string>, field: string): string | undefined;
  /** What `instances` drivers with these settings take of the cluster's resourceQuota. */
  quotaNeed(m: MemorySettings, instances: number): QuotaNeed;
  /**
   * The most the cluster itself can ever give one request (a YARN queue's maximum capacity), asked of the
   * cluster; undefined when it has no such limit or cannot be asked now (the request then goes on).
   */
  capacity?(c: StoredOf<S>): Promise<{ what: string; cpu?: number; memory?: number } | undefined>;
  /** Whether the quota's limitsPod applies (pods on k8s, containers on YARN). */
  countsPods: boolean;
  capabilities: ClusterCapabilities;
  /**
   * Removes what its ended drivers left on this host before `cutoff` (epoch ms), for the retention sweep
   * (activities/retention.ts); how many folders went. Absent: nothing of its drivers stays on the host.
   */
  sweep?(config: Pick<Config, 'STACK_DIR'>, cutoff: number): Promise<number>;
}

/** A stored cluster of a type whose settings are `S` (cluster-types.ts's StoredCluster: of any type). */
export type StoredOf<S extends z.ZodRawShape> = StoredClusterBase & Partial<z.infer<z.ZodObject<S>>>;

/** Requested executors of a driver with these settings: Spark's defaults where unset. */
export const executorsOf = (m: MemorySettings): number =>
  m.dynamicAllocation ? (m.maxExecutors ?? m.initialExecutors ?? 1) : (m.executors ?? 2);
