// The manifests of SQL engines on k8s clusters (role sql-engine), piece by piece (no API server).
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Pod } from 'kubernetes-models/v1/Pod';
import { Service } from 'kubernetes-models/v1/Service';
import { describe, expect, it } from 'vitest';
import { buildDriverManifests } from '../../activities/adapters/k8s/manifests';
import { ENGINE_PORTS, k8sNames, Labels } from '../../activities/adapters/k8s/names';
import type { K8sCluster } from '../../activities/adapters/k8s/options';
import { engineEndpoint, thriftServerConf, withEndpoint } from '../../activities/adapters/k8s/sql-engine';
import { THRIFT_SERVER_CLASS } from '../../activities/adapters/sql-engine-config';
import { TRINO_CONTAINER } from '../../activities/adapters/k8s/trino';
import { validateManifests } from '../../activities/adapters/k8s/validate';
import type { DriverSpec, DriverStatus } from '../../domain/driver';
import { sqlEngineDriverId, type SqlEngine } from '../../domain/sql-engine';
import { sparkSpec } from '../../testkit/spark-spec';

const config = { K8S_SPARK_IMAGE: 'apache/spark:3.5.7', K8S_NAMESPACE: 'jobs', ARTIFACT_DIR: '/srv/artifacts' };
const cluster: K8sCluster = {
  name: 'prod',
  url: 'https://k8s:6443',
  sparkStorage: 'minio',
  storages: { minio: { sparkBucket: 'spark', endpoint: 'http://minio:9000', accessKey: 'AK', secretKey: 'SK' } },
  defaultApplicationConfig: 'spark.sql.shuffle.partitions=8',
};

function spec(type: SqlEngine, spark: Partial<DriverSpec['spark']> = {}): DriverSpec {
  return {
    driverId: sqlEngineDriverId('prod', type, 3),
    role: 'sql-engine',
    engine: { type, stateKey: 'prod' },
    env: { TEAM: 'data' },
    labels: {},
    spark: sparkSpec({ name: `${type} engine`, language: 'SCALA', clusterName: 'prod', ...spark }),
  };
}

const build = (s: DriverSpec, cfg: object = config) =>
  buildDriverManifests(s, { cluster, config: { ...config, ...cfg } });

/** The values of every `flag k=v` pair of an argument list. */
function pairs(args: string[], flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  args.forEach((a, i) => {
    if (a === flag)
      out[args[i + 1].slice(0, args[i + 1].indexOf('='))] = args[i + 1].slice(args[i + 1].indexOf('=') + 1);
  });
  return out;
}

describe('SPARK_SQL engine', () => {
  const m = build(spec('SPARK_SQL'));
  const n = k8sNames('sparksql-prod-g3');
  const container = m.pod.spec!.containers[0];

  it('is a Spark driver pod running the Thrift Server in client mode, by class, with no primary resource', () => {
    const args = container.args!;
    expect(container.command).toEqual(['/opt/spark/bin/spark-submit']);
    expect(args.slice(0, 6)).toEqual([
      '--master',
      'k8s://https://kubernetes.default.svc',
      '--deploy-mode',
      'client',
      '--name',
      'SPARK_SQL engine',
    ]);
    expect(args[args.indexOf('--class') + 1]).toBe(THRIFT_SERVER_CLASS);
    expect(args).not.toContain('spark-internal');
    expect(pairs(args, '--hiveconf')).toEqual(thriftServerConf());
    expect(thriftServerConf()).toMatchObject({
      'hive.server2.thrift.port': '10000',
      'hive.server2.thrift.bind.host': '0.0.0.0',
    });
    // The cluster's Spark settings and the executor wiring of any k8s driver.
    expect(pairs(args, '--conf')).toMatchObject({
      'spark.sql.shuffle.partitions': '8',
      'spark.driver.host': `${n.service}.jobs.svc`,
      'spark.kubernetes.executor.podNamePrefix': n.base,
    });
  });

  it('labels its objects with role and engine, serves the Thrift port, keeps the headless service and secret', () => {
    expect(m.pod.metadata!.labels).toMatchObject({
      [Labels.ROLE]: 'sql-engine',
      [Labels.ENGINE]: 'SPARK_SQL',
      [Labels.SPARK_ROLE]: 'driver',
    });
    expect(container.ports).toContainEqual({ name: 'thrift', containerPort: 10000 });
    expect(m.service?.spec).toMatchObject({ clusterIP: 'None' });
    expect(m.secret?.metadata?.name).toBe(n.secret);
    expect(m.configMap).toBeUndefined();
  });

  it('has a ClusterIP service on port 10000 that selects the driver pod, not its executors', () => {
    expect(m.engineService?.metadata?.name).toBe(`${n.base}-sql`);
    expect(m.engineService?.spec).toEqual({
      type: 'ClusterIP',
      selector: { [Labels.DRIVER_ID]: n.base, [Labels.ROLE]: 'sql-engine' },
      ports: [{ name: 'thrift', port: 10000, targetPort: 10000 }],
    });
  });
});

describe('TRINO engine', () => {
  const n = k8sNames('trino-prod-g3');
  const m = build(spec('TRINO'));
  const container = m.pod.spec!.containers[0];

  it("is one pod of Trino's image (K8S_TRINO_IMAGE) with its etc folder from the ConfigMap", () => {
    expect(container).toMatchObject({
      name: TRINO_CONTAINER,
      image: 'trinodb/trino:368',
      ports: [{ name: 'http', containerPort: 8080 }],
    });
    expect(container.command).toBeUndefined();
    expect(container.env).toEqual([{ name: 'TEAM', value: 'data' }]);
    expect(build(spec('TRINO'), { K8S_TRINO_IMAGE: 'registry.local/trino:368' }).pod.spec!.containers[0].image).toBe(
      'registry.local/trino:368',
    );
    expect(container.volumeMounts).toEqual([{ name: 'trino-etc', mountPath: '/etc/trino', readOnly: true }]);
    expect(m.pod.spec!.volumes).toEqual([
      {
        name: 'trino-etc',
        configMap: {
          name: n.configMap,
          items: [
            { key: 'node.properties', path: 'node.properties' },
            { key: 'jvm.config', path: 'jvm.config' },
            { key: 'config.properties', path: 'config.properties' },
            { key: 'catalog.tpch.properties', path: 'catalog/tpch.properties' },
            { key: 'catalog.memory.properties', path: 'catalog/memory.properties' },
          ],
        },
      },
    ]);
    expect(m.pod.metadata!.labels).toMatchObject({ [Labels.ROLE]: 'sql-engine', [Labels.ENGINE]: 'TRINO' });
  });

  it('configures a coordinator on port 8080 with the tpch and memory catalogs', () => {
    expect(m.configMap?.metadata?.name).toBe(`${n.base}-config`);
    const data = m.configMap!.data!;
    expect(data['config.properties']).toBe(
      [
        'coordinator=true',
        'node-scheduler.include-coordinator=true',
        'http-server.http.port=8080',
        'discovery.uri=http://localhost:8080',
        'query.min-expire-age=5s',
        'task.info.max-age=10s',
        '',
      ].join('\n'),
    );
    expect(data['node.properties']).toBe(
      `node.environment=spark_orchestrator\nnode.id=${n.pod}\nnode.data-dir=/data/trino\n`,
    );
    expect(data['catalog.tpch.properties']).toBe('connector.name=tpch\n');
    expect(data['catalog.memory.properties']).toBe('connector.name=memory\n');
    expect(data['jvm.config']).toContain('-Xmx1024M\n');
  });

  it('sizes heap and container from driverMemory and driverCores; needs no headless service and no secret', () => {
    const big = build(
      spec('TRINO', { memorySettings: { dynamicAllocation: false, driverMemory: '4g', driverCores: 2 } }),
    );
    expect(big.configMap!.data!['jvm.config']).toContain('-Xmx4096M\n');
    expect(big.pod.spec!.containers[0].resources).toEqual({
      requests: { cpu: '2', memory: '5120Mi' },
      limits: { cpu: '2', memory: '5120Mi' },
    });
    expect(container.resources).toEqual({
      requests: { cpu: '1', memory: '1536Mi' },
      limits: { cpu: '1', memory: '1536Mi' },
    });
    expect(m.service).toBeUndefined();
    expect(m.secret).toBeUndefined();
    expect(m.engineService?.spec?.ports).toEqual([{ name: 'http', port: 8080, targetPort: 8080 }]);
  });
});

describe('any engine', () => {
  it('passes the official schema', async () => {
    for (const type of ['SPARK_SQL', 'TRINO'] as const) {
      const m = build(spec(type));
      await expect(validateManifests(m)).resolves.toBeUndefined();
      expect(() => new Pod(m.pod as never).validate()).not.toThrow();
      expect(() => new Service(m.engineService as never).validate()).not.toThrow();
      if (m.configMap) expect(() => new ConfigMap(m.configMap as never).validate()).not.toThrow();
    }
  });

  it('refuses a spec without an engine, permanently', () => {
    expect(() => build({ ...spec('TRINO'), engine: undefined })).toThrow(
      expect.objectContaining({ type: 'InvalidSpec', nonRetryable: true, message: expect.stringMatching(/no engine/) }),
    );
  });

  it("reports the endpoint, <service>.<namespace>.svc on the engine's port, once the pod runs", () => {
    const n = k8sNames('trino-prod-g3');
    const pod = (type: string | undefined) =>
      ({ metadata: { labels: type ? { [Labels.ENGINE]: type } : {} } }) as never;
    const running: DriverStatus = { phase: 'RUNNING' };
    expect(engineEndpoint(n, 'jobs', 'TRINO')).toEqual({ host: `${n.base}-sql.jobs.svc`, port: 8080 });
    expect(withEndpoint(running, pod('TRINO'), n, 'jobs')).toEqual({
      phase: 'RUNNING',
      endpoint: { host: `${n.base}-sql.jobs.svc`, port: 8080 },
    });
    expect(withEndpoint(running, pod('SPARK_SQL'), n, 'jobs').endpoint?.port).toBe(ENGINE_PORTS.SPARK_SQL);
    expect(withEndpoint({ phase: 'PENDING' }, pod('TRINO'), n, 'jobs')).toEqual({ phase: 'PENDING' });
    expect(withEndpoint(running, pod(undefined), n, 'jobs')).toEqual(running);
  });
});
