// A driver's manifests, composed from the small pieces beside this file: the context (names,
// storage, artifacts, main resource), the Spark properties, the spark-submit arguments, the
// environment, and the pod, service and secret around them; SQL engines add their own service, and
// TRINO engines are a Trino pod with a ConfigMap instead (sql-engine.ts, trino.ts); Spark Connect servers are
// a driver pod with their port (connect-server.ts).
import type { V1ConfigMap, V1ContainerPort, V1EnvVar, V1Pod, V1Secret, V1Service } from '@kubernetes/client-node';
import type { DriverSpec } from '../../../domain/driver';
import { manifestContext, type ManifestContext } from './context';
import { driverEnv } from './driver-env';
import { eventLogBucket, withEventLog } from './event-logs';
import { networkPolicyManifest, type NetworkPolicyManifest } from './network-policy';
import { invalidSpec } from './errors';
import type { K8sNames } from './names';
import type { K8sStorage, ManifestOptions } from './options';
import type { ArtifactUpload } from './artifacts';
import { podManifest, secretManifest, serviceManifest } from './resources';
import { checkAccessSettings, sparkConf, type SparkConf } from './spark-conf';
import { engineContainerPort, engineServiceManifest, THRIFT_ARG_PARTS } from './sql-engine';
import { CONNECT_ARG_PARTS, connectContainerPort, connectServerConf, connectServerEnv } from './connect-server';
import { submitArgs, type ArgPart } from './submit-args';
import { trinoConfigMap, trinoPod } from './trino';

export interface DriverManifests {
  names: K8sNames;
  /** What launch uploads before creating the pod, to which bucket of which storage. */
  artifacts: { bucket?: string; uploads: ArtifactUpload[]; storage?: K8sStorage };
  pod: V1Pod;
  /** Headless, how executors reach the driver: every Spark driver has one (TRINO engines do not). */
  service?: V1Service;
  /** Only when the default storage has keys. */
  secret?: V1Secret;
  /** SQL engines: the ClusterIP service clients connect through. */
  engineService?: V1Service;
  /** TRINO engines: Trino's etc folder. */
  configMap?: V1ConfigMap;
  /** Ingress only from the service's pods and the driver's executors. */
  networkPolicy: NetworkPolicyManifest;
  /** The bucket its event log goes to (event-logs.ts), which launch makes a folder to s3a. */
  eventLogBucket?: string;
}

/**
 * The pod, services, secret and ConfigMap of a driver. Pure (no API calls), so tests and operators can
 * inspect exactly what launch sends. Throws a non-retryable InvalidSpec failure for specs that cannot run.
 */
export function buildDriverManifests(spec: DriverSpec, opts: ManifestOptions): DriverManifests {
  const c = manifestContext(spec, opts);
  checkAccessSettings(c);
  if (spec.role === 'sql-engine') return engineManifests(c);
  if (spec.role === 'connect-server') return sparkDriverManifests(c, connectServer(opts));
  return sparkDriverManifests(c, {});
}

/** What a Spark driver pod runs besides a job's own program: a server's settings, arguments, environment, port. */
interface DriverProgram {
  /** Spark properties over the cluster's and the job's. */
  conf?: SparkConf;
  /** The spark-submit arguments (default: a job's, submit-args.ts). */
  argParts?: readonly ArgPart[];
  /** Variables after the driver's own (driverEnv). */
  env?: (c: ManifestContext, conf: SparkConf) => V1EnvVar[];
  /** Container ports besides the driver's. */
  ports?: V1ContainerPort[];
  /** A ClusterIP service clients connect through. */
  engineService?: V1Service;
}

/** A driver pod (spark-submit in client mode) with its headless service, secret, policy and event log. */
function sparkDriverManifests(c: ManifestContext, program: DriverProgram): DriverManifests {
  const base = { ...sparkConf(c), ...program.conf };
  const eventLog = eventLogBucket(c, base);
  const conf = withEventLog(base, eventLog);
  const args = submitArgs(c, conf, program.argParts);
  const env = [...driverEnv(c), ...(program.env?.(c, conf) ?? [])];
  const { engineService } = program;
  return {
    names: c.names,
    artifacts: { bucket: c.artifacts.bucket, uploads: c.artifacts.uploads, storage: c.storage },
    eventLogBucket: eventLog,
    networkPolicy: networkPolicyManifest(c),
    pod: podManifest(c, conf, args, env, program.ports),
    service: serviceManifest(c),
    ...(engineService ? { engineService } : {}),
    secret: secretManifest(c),
  };
}

/** A SPARK_SQL engine is a driver running the Thrift Server on its port; TRINO is a Trino pod (trino.ts). */
function engineManifests(c: ManifestContext): DriverManifests {
  const type = c.spec.engine?.type;
  if (!type) throw invalidSpec(`driver ${c.spec.driverId} has role sql-engine but no engine`);
  const engineService = engineServiceManifest(c, type);
  if (type === 'TRINO')
    return {
      names: c.names,
      artifacts: { uploads: [] },
      networkPolicy: networkPolicyManifest(c),
      pod: trinoPod(c),
      engineService,
      configMap: trinoConfigMap(c),
    };
  return sparkDriverManifests(c, { argParts: THRIFT_ARG_PARTS, ports: [engineContainerPort(type)], engineService });
}

/**
 * A Spark Connect server: a driver with the server's port and interceptor, reached at its pod IP, given only the
 * SHA-256 of its secret; connectServerEnv refuses a stock Spark image and a service without SECRET_KEY.
 */
const connectServer = (opts: ManifestOptions): DriverProgram => ({
  conf: connectServerConf(),
  argParts: CONNECT_ARG_PARTS,
  env: (c, conf) => connectServerEnv(c, conf, opts.config.SECRET_KEY),
  ports: [connectContainerPort()],
});
