// Spark Connect servers on k8s clusters (DriverSpec.role 'connect-server'): a driver pod like any other
// (spark-submit in client mode, executors reaching it through the headless service) running Spark 3.5.7's
// SparkConnectServer on CONNECT_POD_PORT. No Service exposes that port: the gateway (in the API pod, which the
// driver's NetworkPolicy admits) reaches the server at its pod IP, as api/spark-ui/targets.ts reaches a driver's
// UI, and the pod IP comes from the pod's status, which its kubelet writes and no job may change.
//
// Spark 3.5 binds every interface of the pod and has no address setting, so the server loads the interceptor
// of scripts/connect/ServerSecretInterceptor.java, which refuses a call without the per-server secret only the
// gateway adds. The pod is given no secret at all, only its SHA-256 (CONNECT_SERVER_SECRET_SHA256): the
// interceptor hashes what a caller presents and compares. Whatever can read the pod (its spec, its environment,
// a session's code in the server or its executors, anyone allowed to get pods) learns a hash it cannot call
// with. A Kubernetes Secret would instead be readable by any principal allowed to get secrets in the namespace,
// and a mounted file stays readable in the pod for its life (a session's `ADD FILE` ships it to an executor).
//
// The server's jars are in the driver image (deploy/docker/driver.Dockerfile) at IMAGE_CONNECT_DIR; stock
// apache/spark images lack the interceptor, so a launch with one fails as an invalid spec, saying so.
import { createHash } from 'node:crypto';
import type { V1EnvVar, V1Pod } from '@kubernetes/client-node';
import { DriverPhase, type DriverStatus } from '../../../domain/driver';
import type { EngineEndpoint } from '../../../domain/sql-engine';
import { connectServerSecret } from '../../../lib/driver-secret';
import type { ManifestContext } from './context';
import { IMAGE_CONNECT_DIR } from './connect-image';
import { invalidSpec } from './errors';
import { Labels } from './names';
import { driverImage, type SparkConf } from './spark-conf';
import { SERVER_ARG_PARTS, STOCK_SPARK_IMAGE, type ArgPart } from './submit-args';

export { CONNECT_SERVER_CLASS, IMAGE_CONNECT_DIR, imageConnectJars } from './connect-image';
const INTERCEPTOR_CLASS = 'sparkorchestrator.connect.ServerSecretInterceptor';
/** Spark Connect's own default port, inside the pod only. */
export const CONNECT_POD_PORT = 15002;
/** The interceptor's variable: the hex SHA-256 of the secret callers must present. */
export const SECRET_SHA256_ENV = 'CONNECT_SERVER_SECRET_SHA256';

export const connectServerConf = (): SparkConf => ({
  'spark.connect.grpc.binding.port': String(CONNECT_POD_PORT),
  'spark.connect.grpc.interceptor.classes': INTERCEPTOR_CLASS,
});

/** spark-submit knows no Connect server class: `spark-internal` is its word for no primary resource. */
const noResource: ArgPart = () => ['spark-internal'];

export const CONNECT_ARG_PARTS: readonly ArgPart[] = [...SERVER_ARG_PARTS, noResource];

export const connectContainerPort = () => ({ name: 'spark-connect', containerPort: CONNECT_POD_PORT });

/** The verifier of the server's secret; throws InvalidSpec when it cannot run safely here. */
export function connectServerEnv(c: ManifestContext, conf: SparkConf, secretKey: string | undefined): V1EnvVar[] {
  if (!secretKey) throw invalidSpec('Connect servers need SECRET_KEY (their secret derives from it)');
  const image = driverImage(c, conf);
  if (STOCK_SPARK_IMAGE.test(image))
    throw invalidSpec(
      `the Spark image ${image} has no Spark Connect server: Connect servers on k8s need the driver image of deploy/docker (its ${IMAGE_CONNECT_DIR})`,
    );
  const hash = createHash('sha256').update(connectServerSecret(secretKey, c.spec.driverId)).digest('hex');
  return [{ name: SECRET_SHA256_ENV, value: hash }];
}

/** Where the gateway reaches a running server: its pod's IP, as the pod's status reports it. */
export function connectEndpoint(pod: V1Pod): EngineEndpoint | undefined {
  const ip = pod.status?.podIP;
  return ip ? { host: ip, port: CONNECT_POD_PORT } : undefined;
}

/** The status with the server's endpoint once its pod runs; servers are known by their pod's role label. */
export function withConnectEndpoint(s: DriverStatus, pod: V1Pod): DriverStatus {
  if (s.phase !== DriverPhase.RUNNING || pod.metadata?.labels?.[Labels.ROLE] !== 'connect-server') return s;
  const endpoint = connectEndpoint(pod);
  return endpoint ? { ...s, endpoint } : s;
}
