// A driver's manifests, composed from the small pieces beside this file: the context (names,
// storage, artifacts, main resource), the Spark properties, the spark-submit arguments, the
// environment, and the pod, service and secret around them.
import type { V1Pod, V1Secret, V1Service } from '@kubernetes/client-node';
import type { DriverSpec } from '../../../domain/driver';
import { manifestContext } from './context';
import { driverEnv } from './driver-env';
import type { K8sNames } from './names';
import type { ManifestOptions } from './options';
import { podManifest, secretManifest, serviceManifest } from './resources';
import { sparkConf } from './spark-conf';
import { submitArgs } from './submit-args';

export interface DriverManifests {
  names: K8sNames;
  pod: V1Pod;
  service: V1Service;
  /** Only when the default storage has keys. */
  secret?: V1Secret;
}

/**
 * The pod, service and secret of a driver. Pure (no API calls), so tests and operators can inspect
 * exactly what launch sends. Throws a non-retryable InvalidSpec failure for specs that cannot run.
 */
export function buildDriverManifests(spec: DriverSpec, opts: ManifestOptions): DriverManifests {
  const c = manifestContext(spec, opts);
  const conf = sparkConf(c);
  const args = submitArgs(c, conf);
  const env = driverEnv(c);
  return { names: c.names, pod: podManifest(c, conf, args, env), service: serviceManifest(c), secret: secretManifest(c) };
}
