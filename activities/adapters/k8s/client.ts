// The adapter's connection to a cluster's API server: a CoreV1Api over our own transport, and the
// wording of failed calls with every credential of the cluster scrubbed out.
import {
  CoreV1Api,
  createConfiguration,
  NetworkingV1Api,
  ServerConfiguration,
  wrapHttpLibrary,
} from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { clusterSecretValues } from '../../../lib/cluster-secrets';
import { apiErrors, INVALID_CLUSTER } from './errors';
import { buildKubeConfig } from './kube-config';
import type { DriverPlacements, K8sAdapterOptions, K8sCluster, ObjectStore } from './options';
import { send, transportFor } from './transport';

export interface K8sConnection {
  /** The API client; throws a non-retryable InvalidClusterConfig failure when the cluster document cannot connect. */
  client(): CoreV1Api;
  /** The networking.k8s.io/v1 client (NetworkPolicies), over the same connection. */
  networking(): NetworkingV1Api;
  /** Words a failed read (see apiErrors). */
  describe: ReturnType<typeof apiErrors>['describe'];
  /** Words a failed create, permanent when the server refused it for good (errors.ts). */
  fail: ReturnType<typeof apiErrors>['fail'];
  /** Takes every credential of the cluster out of a message. */
  scrub: (msg: string) => string;
}

/** What each operation of the adapter needs: the connection, the namespace, the options, where logs are saved. */
export interface K8sContext extends K8sConnection {
  /** The driver's namespace (the cluster's for a new driver, its recorded one after). */
  namespace: string;
  /** Where each driver was launched. */
  placements: DriverPlacements;
  opts: K8sAdapterOptions;
  /** Where remove saves the pods' logs; none: not saved. */
  logDir?: string;
  /** The cluster's storage client, made on the first upload. */
  objectStore?: ObjectStore;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url; // keep the configured string; the kubeconfig reports it
  }
}

interface Apis {
  core: CoreV1Api;
  networking: NetworkingV1Api;
}

function createApi(cluster: K8sCluster, namespace: string, timeoutMs: number): Apis {
  const kc = buildKubeConfig(cluster, namespace);
  const target = kc.getCurrentCluster()!;
  if (target.server.startsWith('http:') && !target.skipTLSVerify) {
    throw new Error(
      `cluster '${cluster.name}': a caCert cannot verify the plain http:// API server URL ${target.server}; use https://`,
    );
  }
  const transport = transportFor(kc, timeoutMs);
  // Reported on the first call that needs it, not as an unhandled rejection.
  transport.catch(() => undefined);
  const httpApi = wrapHttpLibrary({ send: async (req) => send(await transport, req, timeoutMs) });
  const configuration = createConfiguration({
    baseServer: new ServerConfiguration(target.server, {}),
    httpApi,
    authMethods: {},
  });
  return { core: new CoreV1Api(configuration), networking: new NetworkingV1Api(configuration) };
}

/** A cluster document that cannot connect (bad key, http with a CA) fails on first use, not here. */
export function connect(cluster: K8sCluster, namespace: string, timeoutMs: number): K8sConnection {
  const secrets = clusterSecretValues(cluster);
  /** Messages leave the adapter without any credential in them, whatever produced them. */
  const scrub = (msg: string) => secrets.reduce((m, s) => m.split(s).join('***'), msg);
  let api: Apis | undefined;
  let setupError: Error | undefined;
  try {
    api = createApi(cluster, namespace, timeoutMs);
  } catch (e) {
    setupError = new Error(scrub((e as Error).message));
  }
  const apis = (): Apis => {
    if (!api) throw ApplicationFailure.nonRetryable(setupError?.message ?? 'no client', INVALID_CLUSTER);
    return api;
  };
  return {
    client: () => apis().core,
    networking: () => apis().networking,
    scrub,
    ...apiErrors(hostOf(cluster.url), scrub),
  };
}
