// SQL engines on k8s clusters (DriverSpec.role 'sql-engine'). A SPARK_SQL engine is a driver pod like
// any other (spark-submit in client mode, executors reaching it through the headless service) that runs
// Spark's Thrift Server; a TRINO engine is one Trino pod (trino.ts). Either has a ClusterIP service
// `<base>-sql` on its engine's port, which is what the endpoint names: <service>.<namespace>.svc.
import type { V1Pod, V1Service } from '@kubernetes/client-node';
import { DriverPhase, type DriverStatus } from '../../../domain/driver';
import type { EngineEndpoint, SqlEngine } from '../../../domain/sql-engine';
import type { ManifestContext } from './context';
import { ENGINE_PORTS, Labels, type K8sNames } from './names';
import { objectMeta } from './resources';
import { noExpansion, SERVER_ARG_PARTS, type ArgPart } from './submit-args';

/** Writable in any image: the Thrift Server's Derby metastore and statement logs live here, for the pod's life. */
const SQL_DIR = '/tmp/spark-sql';

/** The Thrift Server's settings: its port on every interface of the pod, metastore and operation logs in SQL_DIR. */
export const thriftServerConf = (): Record<string, string> => ({
  'hive.server2.thrift.port': String(ENGINE_PORTS.SPARK_SQL),
  'hive.server2.thrift.bind.host': '0.0.0.0',
  'javax.jdo.option.ConnectionURL': `jdbc:derby:;databaseName=${SQL_DIR}/metastore_db;create=true`,
  'hive.server2.logging.operation.enabled': 'true',
  'hive.server2.logging.operation.log.location': `${SQL_DIR}/operation_logs`,
});

export const hiveConfOptions: ArgPart = () =>
  Object.entries(thriftServerConf()).flatMap(([k, v]) => ['--hiveconf', noExpansion(`${k}=${v}`)]);

/** The Thrift Server's spark-submit arguments: spark-submit passes what follows the class to it, --hiveconf last. */
export const THRIFT_ARG_PARTS: readonly ArgPart[] = [...SERVER_ARG_PARTS, hiveConfOptions];

/** The port name an engine's pod and service give its port. */
const PORT_NAME: Record<SqlEngine, string> = { SPARK_SQL: 'thrift', TRINO: 'http' };

export const engineContainerPort = (type: SqlEngine) => ({ name: PORT_NAME[type], containerPort: ENGINE_PORTS[type] });

/** ClusterIP: one stable address for clients, whichever generation's pod is behind it. */
export const engineServiceManifest = (c: ManifestContext, type: SqlEngine): V1Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: objectMeta(c, c.names.engineService),
  spec: {
    type: 'ClusterIP',
    // The role keeps a SPARK_SQL engine's executors (which carry its driver-id label) out.
    selector: { [Labels.DRIVER_ID]: c.names.base, [Labels.ROLE]: 'sql-engine' },
    ports: [{ name: PORT_NAME[type], port: ENGINE_PORTS[type], targetPort: ENGINE_PORTS[type] }],
  },
});

export const engineEndpoint = (names: K8sNames, namespace: string, type: SqlEngine): EngineEndpoint => ({
  host: `${names.engineService}.${namespace}.svc`,
  port: ENGINE_PORTS[type],
});

const isEngineType = (t: string | undefined): t is SqlEngine => t === 'SPARK_SQL' || t === 'TRINO';

/** The status with the engine's endpoint once its pod runs; engines are known by their pod's engine label. */
export function withEndpoint(s: DriverStatus, pod: V1Pod, names: K8sNames, namespace: string): DriverStatus {
  const type = pod.metadata?.labels?.[Labels.ENGINE];
  if (s.phase !== DriverPhase.RUNNING || !isEngineType(type)) return s;
  // The pod's own namespace: the one it was launched in, whatever the cluster says now.
  return { ...s, endpoint: engineEndpoint(names, pod.metadata?.namespace ?? namespace, type) };
}
