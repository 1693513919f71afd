// A driver's manifests, composed from the small pieces beside this file: the context (names,
// storage, artifacts, main resource), the Spark properties, the spark-submit arguments, the
// environment, and the pod, service and secret around them; SQL engines add their own service, and
// TRINO engines are a Trino pod with a ConfigMap instead (sql-engine.ts, trino.ts); Spark Connect servers are
// a driver pod with their port (connect-server.ts).
import type { V1ConfigMap, V1Pod, V1Secret, V1Service } from '@kubernetes/client-node';
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
import { checkAccessSettings, sparkConf } from './spark-conf';
import { engineContainerPort, engineServiceManifest, THRIFT_ARG_PARTS } from './sql-engine';
import { CONNECT_ARG_PARTS, connectContainerPort, connectServerConf, connectServerEnv } from './connect-server';
import { submitArgs } from './submit-args';
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
  if (spec.role === 'connect-server') return connectManifests(c, opts);
  const base = sparkConf(c);
  const eventLog = eventLogBucket(c, base);
  const conf = withEventLog(base, eventLog);
  const args = submitArgs(c, conf);
  const env = driverEnv(c);
  return {
    names: c.names,
    artifacts: artifactsOf(c),
    eventLogBucket: eventLog,
    networkPolicy: networkPolicyManifest(c),
    pod: podManifest(c, conf, args, env),
    service: serviceManifest(c),
    secret: secretManifest(c),
  };
}

const artifactsOf = ({ artifacts, storage }: ManifestContext): DriverManifests['artifacts'] => ({
  bucket: artifacts.bucket,
  uploads: artifacts.uploads,
  storage,
});

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
  const base = sparkConf(c);
  const eventLog = eventLogBucket(c, base);
  const conf = withEventLog(base, eventLog);
  const pod = podManifest(c, conf, submitArgs(c, conf, THRIFT_ARG_PARTS), driverEnv(c), [engineContainerPort(type)]);
  return {
    names: c.names,
    artifacts: artifactsOf(c),
    eventLogBucket: eventLog,
    networkPolicy: networkPolicyManifest(c),
    pod,
    service: serviceManifest(c),
    engineService,
    secret: secretManifest(c),
  };
}

/** A Spark Connect server: a driver pod with the server's port, reached at its pod IP (connect-server.ts). */
function connectManifests(c: ManifestContext, opts: ManifestOptions): DriverManifests {
  const base = { ...sparkConf(c), ...connectServerConf() };
  const eventLog = eventLogBucket(c, base);
  const conf = withEventLog(base, eventLog);
  const env = [...driverEnv(c), ...connectServerEnv(c, conf, opts.config.SECRET_KEY)];
  return {
    names: c.names,
    artifacts: artifactsOf(c),
    eventLogBucket: eventLog,
    networkPolicy: networkPolicyManifest(c),
    pod: podManifest(c, conf, submitArgs(c, conf, CONNECT_ARG_PARTS), env, [connectContainerPort()]),
    service: serviceManifest(c),
    secret: secretManifest(c),
  };
}
