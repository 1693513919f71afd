// A driver's manifests, composed from the small pieces beside this file: the context (names,
// storage, artifacts, main resource), the Spark properties, the spark-submit arguments, the
// environment, and the pod, service and secret around them; SQL engines add their own service, and
// TRINO engines are a Trino pod with a ConfigMap instead (sql-engine.ts, trino.ts).
import type { V1ConfigMap, V1Pod, V1Secret, V1Service } from '@kubernetes/client-node';
import type { DriverSpec } from '../../../domain/driver';
import { manifestContext, type ManifestContext } from './context';
import { driverEnv } from './driver-env';
import { invalidSpec } from './errors';
import type { K8sNames } from './names';
import type { ManifestOptions } from './options';
import { podManifest, secretManifest, serviceManifest } from './resources';
import { sparkConf } from './spark-conf';
import { engineContainerPort, engineServiceManifest, THRIFT_ARG_PARTS } from './sql-engine';
import { submitArgs } from './submit-args';
import { trinoConfigMap, trinoPod } from './trino';

export interface DriverManifests {
  names: K8sNames;
  pod: V1Pod;
  /** Headless, how executors reach the driver: every Spark driver has one (TRINO engines do not). */
  service?: V1Service;
  /** Only when the default storage has keys. */
  secret?: V1Secret;
  /** SQL engines: the ClusterIP service clients connect through. */
  engineService?: V1Service;
  /** TRINO engines: Trino's etc folder. */
  configMap?: V1ConfigMap;
}

/**
 * The pod, services, secret and ConfigMap of a driver. Pure (no API calls), so tests and operators can
 * inspect exactly what launch sends. Throws a non-retryable InvalidSpec failure for specs that cannot run.
 */
export function buildDriverManifests(spec: DriverSpec, opts: ManifestOptions): DriverManifests {
  const c = manifestContext(spec, opts);
  if (spec.role === 'sql-engine') return engineManifests(c);
  const conf = sparkConf(c);
  const args = submitArgs(c, conf);
  const env = driverEnv(c);
  return {
    names: c.names,
    pod: podManifest(c, conf, args, env),
    service: serviceManifest(c),
    secret: secretManifest(c),
  };
}

function engineManifests(c: ManifestContext): DriverManifests {
  const type = c.spec.engine?.type;
  if (!type) throw invalidSpec(`driver ${c.spec.driverId} has role sql-engine but no engine`);
  const engineService = engineServiceManifest(c, type);
  if (type === 'TRINO') return { names: c.names, pod: trinoPod(c), engineService, configMap: trinoConfigMap(c) };
  const conf = sparkConf(c);
  const pod = podManifest(c, conf, submitArgs(c, conf, THRIFT_ARG_PARTS), driverEnv(c), [engineContainerPort(type)]);
  return { names: c.names, pod, service: serviceManifest(c), engineService, secret: secretManifest(c) };
}
