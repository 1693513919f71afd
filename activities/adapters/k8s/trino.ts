// A TRINO engine on a k8s cluster: one pod of Trino's image, a coordinator that also runs the queries,
// with its etc folder (../sql-engine-config.ts) mounted from a ConfigMap. Its service: sql-engine.ts.
import type { V1ConfigMap, V1Pod, V1ResourceRequirements } from '@kubernetes/client-node';
import { trinoEtcFiles, trinoHeapMiB } from '../sql-engine-config';
import type { ManifestContext } from './context';
import { specEnv } from './driver-env';
import { ENGINE_PORTS } from './names';
import { objectMeta } from './resources';
import { engineContainerPort } from './sql-engine';

export const TRINO_CONTAINER = 'trino';
/** Where Trino's image reads its configuration from, and the data folder it owns. */
const ETC_DIR = '/etc/trino';
const DATA_DIR = '/data/trino';
const ETC_VOLUME = 'trino-etc';

/** ConfigMap keys cannot hold `/`: catalog/tpch.properties is stored as catalog.tpch.properties. */
const configKey = (rel: string) => rel.replaceAll('/', '.');

const heapOf = (c: ManifestContext) => trinoHeapMiB(c.spec.spark.memorySettings.driverMemory);

/** The node id is the pod's name: Trino's image would use the host name, which is the same. */
const etcFiles = (c: ManifestContext) =>
  trinoEtcFiles({ port: ENGINE_PORTS.TRINO, dataDir: DATA_DIR, heapMiB: heapOf(c), nodeId: c.names.pod });

export const trinoConfigMap = (c: ManifestContext): V1ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: objectMeta(c, c.names.configMap),
  data: Object.fromEntries(Object.entries(etcFiles(c)).map(([rel, text]) => [configKey(rel), text])),
});

/** Heap plus what Trino uses beside it (code cache, direct buffers, threads): a quarter more, at least 512 MiB. */
export function trinoResources(c: ManifestContext): V1ResourceRequirements {
  const heap = heapOf(c);
  const memory = `${heap + Math.max(512, Math.ceil(heap / 4))}Mi`;
  const cpu = String(c.spec.spark.memorySettings.driverCores ?? 1);
  return { requests: { cpu, memory }, limits: { cpu, memory } };
}

export function trinoPod(c: ManifestContext): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: objectMeta(c, c.names.pod),
    spec: {
      restartPolicy: 'Never',
      containers: [
        {
          name: TRINO_CONTAINER,
          image: c.trinoImage,
          imagePullPolicy: 'IfNotPresent',
          env: specEnv(c),
          ports: [engineContainerPort('TRINO')],
          resources: trinoResources(c),
          volumeMounts: [{ name: ETC_VOLUME, mountPath: ETC_DIR, readOnly: true }],
        },
      ],
      volumes: [
        {
          name: ETC_VOLUME,
          configMap: {
            name: c.names.configMap,
            items: Object.keys(etcFiles(c)).map((rel) => ({ key: configKey(rel), path: rel })),
          },
        },
      ],
    },
  };
}
