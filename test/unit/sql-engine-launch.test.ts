// What the local adapter runs for an SQL engine (role sql-engine): the command lines and the files of
// each engine type, built from a spec on a given port (a fake Trino install in a temporary folder).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DRIVER_FILES } from '../../activities/adapters/local/driver-files';
import {
  freePort,
  OPERATION_LOG_DIR,
  sqlEngineLaunch,
  sqlStateDir,
  TRINO_DIRS,
} from '../../activities/adapters/local/sql-engine';
import { THRIFT_SERVER_CLASS, trinoHeapMiB } from '../../activities/adapters/sql-engine-config';
import { InvalidSpecError, type DriverSpec } from '../../domain/driver';
import { sqlEngineDriverId } from '../../domain/sql-engine';
import { sparkSpec } from '../../testkit/spark-spec';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'sql-engine-launch-'));
const trinoHome = path.join(tmp, 'trino-server-368');
mkdirSync(path.join(trinoHome, 'bin'), { recursive: true });
writeFileSync(path.join(trinoHome, 'bin', 'launcher.py'), '');
const config = {
  SPARK_HOME: '/opt/spark',
  PYTHON: '/venv/bin/python',
  DRIVER_DIR: path.join(tmp, 'drivers'),
  STACK_DIR: path.join(tmp, 'stack'),
  LOCAL_SPARK_THREADS: 2,
  TRINO_HOME: trinoHome,
};
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function spec(type: 'SPARK_SQL' | 'TRINO', spark: Partial<DriverSpec['spark']> = {}, generation = 1): DriverSpec {
  return {
    driverId: sqlEngineDriverId('default', type, generation),
    role: 'sql-engine',
    engine: { type, stateKey: 'default' },
    env: {},
    labels: {},
    spark: sparkSpec({ name: 'sql engine', language: 'SCALA', clusterName: 'default', ...spark }),
  };
}

/** The values of every `flag k=v` pair of an argument list. */
function pairs(argv: string[], flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  argv.forEach((a, i) => {
    if (a !== flag) return;
    const kv = argv[i + 1];
    out[kv.slice(0, kv.indexOf('='))] = kv.slice(kv.indexOf('=') + 1);
  });
  return out;
}

describe('SPARK_SQL', () => {
  const dir = path.join(config.DRIVER_DIR, 'sparksql-default-g1');
  const state = sqlStateDir(config, 'default');

  it('runs spark-submit of the Thrift Server, with no primary resource, on loopback at the port it was given', () => {
    const { argv, env } = sqlEngineLaunch(spec('SPARK_SQL'), config, 41000);
    expect(argv.slice(0, 8)).toEqual([
      '/opt/spark/bin/spark-submit',
      '--master',
      'local[2]',
      '--name',
      'sql engine',
      '--class',
      THRIFT_SERVER_CLASS,
      '--conf',
    ]);
    // Nothing but options: the first argument after the last option pair is none.
    expect(argv.filter((a, i) => !a.startsWith('--') && !argv[i - 1]?.startsWith('--'))).toEqual([argv[0]]);
    expect(pairs(argv, '--hiveconf')).toEqual({
      'hive.server2.thrift.port': '41000',
      'hive.server2.thrift.bind.host': '127.0.0.1',
      'javax.jdo.option.ConnectionURL': `jdbc:derby:;databaseName=${state}/metastore_db;create=true`,
      'hive.server2.logging.operation.enabled': 'true',
      'hive.server2.logging.operation.log.location': path.join(dir, OPERATION_LOG_DIR),
    });
    expect(env).toEqual({ SPARK_HOME: '/opt/spark' });
  });

  it('keeps warehouse and metastore under STACK_DIR/data/sql/<stateKey>, the same for every generation', () => {
    expect(state).toBe(path.join(config.STACK_DIR, 'data', 'sql', 'default'));
    const g1 = sqlEngineLaunch(spec('SPARK_SQL', {}, 1), config, 41000);
    const g2 = sqlEngineLaunch(spec('SPARK_SQL', {}, 2), config, 41001);
    expect(pairs(g1.argv, '--conf')['spark.sql.warehouse.dir']).toBe(path.join(state, 'warehouse'));
    expect(pairs(g2.argv, '--conf')['spark.sql.warehouse.dir']).toBe(path.join(state, 'warehouse'));
    expect(pairs(g2.argv, '--hiveconf')['javax.jdo.option.ConnectionURL']).toBe(
      pairs(g1.argv, '--hiveconf')['javax.jdo.option.ConnectionURL'],
    );
    expect(g1.dirs).toEqual([DRIVER_FILES.eventLog, OPERATION_LOG_DIR, path.join(state, 'warehouse')]);
  });

  it('builds its conf as other local drivers do (event log, memory, jobConfig); the warehouse stays ours', () => {
    const s = spec('SPARK_SQL', {
      memorySettings: { dynamicAllocation: false, driverMemory: '2g' },
      jobConfig: {
        'spark.sql.shuffle.partitions': '4',
        'spark.ui.enabled': 'true',
        'spark.sql.warehouse.dir': '/elsewhere',
      },
      packages: ['org.example:udfs:1.0'],
      artifacts: { jars: ['/opt/jars/udf.jar'], files: [], pyFiles: [] },
    });
    const { argv } = sqlEngineLaunch(s, config, 41000);
    const conf = pairs(argv, '--conf');
    expect(conf).toMatchObject({
      'spark.eventLog.enabled': 'true',
      'spark.eventLog.dir': `file://${path.join(dir, DRIVER_FILES.eventLog)}`,
      'spark.driver.memory': '2g',
      'spark.sql.shuffle.partitions': '4',
      'spark.ui.enabled': 'true',
      'spark.sql.warehouse.dir': path.join(state, 'warehouse'),
    });
    expect(argv[argv.indexOf('--driver-memory') + 1]).toBe('2g');
    expect(argv[argv.indexOf('--packages') + 1]).toBe('org.example:udfs:1.0');
    expect(argv[argv.indexOf('--jars') + 1]).toBe('/opt/jars/udf.jar');
    expect(pairs(sqlEngineLaunch(spec('SPARK_SQL'), config, 1).argv, '--conf')['spark.ui.enabled']).toBe('false');
  });

  it('records where it listens in the endpoint file', () => {
    const { files } = sqlEngineLaunch(spec('SPARK_SQL'), config, 41000);
    expect(JSON.parse(files[DRIVER_FILES.endpoint])).toEqual({ host: '127.0.0.1', port: 41000 });
  });
});

describe('TRINO', () => {
  const dir = path.join(config.DRIVER_DIR, 'trino-default-g1');
  const etc = path.join(dir, TRINO_DIRS.etc);
  const data = path.join(dir, TRINO_DIRS.data);

  it("runs Trino's launcher in the foreground through PYTHON, with etc and data in the driver folder", () => {
    const { argv, dirs } = sqlEngineLaunch(spec('TRINO'), config, 42000);
    expect(argv).toEqual([
      '/venv/bin/python',
      path.join(trinoHome, 'bin', 'launcher.py'),
      'run',
      `--etc-dir=${etc}`,
      `--data-dir=${data}`,
    ]);
    expect(dirs).toEqual([TRINO_DIRS.data]);
  });

  it('writes a one-node coordinator on loopback with the tpch and memory catalogs, and the endpoint', () => {
    const { files } = sqlEngineLaunch(spec('TRINO'), config, 42000);
    expect(Object.keys(files).sort()).toEqual(
      [
        DRIVER_FILES.endpoint,
        ...[
          'node.properties',
          'jvm.config',
          'config.properties',
          'catalog/tpch.properties',
          'catalog/memory.properties',
        ].map((f) => `${TRINO_DIRS.etc}/${f}`),
      ].sort(),
    );
    const etcFile = (f: string) => files[`${TRINO_DIRS.etc}/${f}`];
    expect(etcFile('node.properties')).toBe(
      [
        'node.environment=spark_orchestrator',
        'node.id=trino-default-g1',
        `node.data-dir=${data}`,
        'node.bind-ip=127.0.0.1',
        'node.internal-address=127.0.0.1',
        '',
      ].join('\n'),
    );
    expect(etcFile('config.properties')).toBe(
      [
        'coordinator=true',
        'node-scheduler.include-coordinator=true',
        'http-server.http.port=42000',
        'discovery.uri=http://127.0.0.1:42000',
        'query.min-expire-age=5s',
        'task.info.max-age=10s',
        '',
      ].join('\n'),
    );
    expect(etcFile('jvm.config').split('\n')).toEqual([
      '-server',
      '-Xmx1024M',
      '-XX:+UseG1GC',
      '-XX:+ExitOnOutOfMemoryError',
      '-Djdk.attach.allowAttachSelf=true',
      '',
    ]);
    expect(etcFile('catalog/tpch.properties')).toBe('connector.name=tpch\n');
    expect(etcFile('catalog/memory.properties')).toBe('connector.name=memory\n');
    expect(JSON.parse(files[DRIVER_FILES.endpoint])).toEqual({ host: '127.0.0.1', port: 42000 });
  });

  it('sizes the heap from driverMemory as Spark reads it, and makes any driverId a valid node id', () => {
    const s = {
      ...spec('TRINO', { memorySettings: { dynamicAllocation: false, driverMemory: '2g' } }),
      driverId: 'trino.x-g1',
    };
    const { files } = sqlEngineLaunch(s, config, 42000);
    expect(files[`${TRINO_DIRS.etc}/jvm.config`]).toContain('-Xmx2048M\n');
    expect(files[`${TRINO_DIRS.etc}/node.properties`]).toContain('node.id=trino_x-g1\n');
    expect([trinoHeapMiB('512'), trinoHeapMiB('1536m'), trinoHeapMiB('1G'), trinoHeapMiB(undefined)]).toEqual([
      512, 1536, 1024, 1024,
    ]);
    expect(() => trinoHeapMiB('lots')).toThrow(InvalidSpecError);
  });

  it('refuses to launch where Trino is not installed, saying how to install it', () => {
    for (const TRINO_HOME of [path.join(tmp, 'nowhere'), undefined]) {
      const launch = () => sqlEngineLaunch(spec('TRINO'), { ...config, TRINO_HOME }, 42000);
      expect(launch).toThrow(InvalidSpecError);
      expect(launch).toThrow(/not installed on this host.*run scripts\/setup\.sh without SKIP_TRINO=1/);
    }
  });
});

describe('any engine', () => {
  it('refuses a spec without an engine and a stateKey that is no folder name', () => {
    expect(() => sqlEngineLaunch({ ...spec('SPARK_SQL'), engine: undefined }, config, 1)).toThrow(
      /has role sql-engine but no engine/,
    );
    for (const stateKey of ['../up', 'a/b', '', '.hidden']) {
      expect(() =>
        sqlEngineLaunch({ ...spec('SPARK_SQL'), engine: { type: 'SPARK_SQL', stateKey } }, config, 1),
      ).toThrow(InvalidSpecError);
    }
  });

  it('picks a loopback port that is free', async () => {
    const port = await freePort();
    expect(port).toBeGreaterThan(0);
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
