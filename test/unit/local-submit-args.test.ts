// The local adapter's spark-submit command line, built from a spec (files in a temporary folder; no Spark).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  localMainResource,
  localSparkConf,
  sparkSubmitArgs,
  usesPython,
} from '../../activities/adapters/local/submit-args';
import { InvalidSpecError, type DriverSpec } from '../../domain/driver';
import { sparkSpec } from '../../testkit/spark-spec';

// Made at load time: the it.each table below names files in it.
const tmp = mkdtempSync(path.join(os.tmpdir(), 'submit-args-'));
const config = {
  SPARK_HOME: '/opt/spark',
  DRIVER_DIR: path.join(tmp, 'drivers'),
  LOCAL_SPARK_THREADS: 3,
  STACK_DIR: path.join(tmp, 'stack'),
};
const file = (name: string) => path.join(tmp, name);
const RUNNER = () => file('runner.py');

beforeAll(() => {
  for (const f of ['app.jar', 'lib.jar', 'main.py', 'helpers.py', 'app.conf', 'runner.py']) writeFileSync(file(f), '');
});
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

function spec(over: Partial<DriverSpec> = {}, spark: Partial<DriverSpec['spark']> = {}): DriverSpec {
  return {
    driverId: 'job-abc-1',
    role: 'application',
    env: {},
    labels: {},
    ...over,
    spark: sparkSpec({
      name: 'wordcount',
      clusterName: 'default',
      jobClass: 'main',
      args: ['in.txt'],
      artifacts: { jars: [], files: [], pyFiles: [file('helpers.py'), file('main.py')] },
      ...spark,
    }),
  };
}
const scala = (spark: Partial<DriverSpec['spark']> = {}) =>
  spec(
    {},
    {
      language: 'SCALA',
      jobClass: 'org.example.App',
      artifacts: { jars: [file('app.jar'), file('lib.jar')], files: [], pyFiles: [] },
      ...spark,
    },
  );

describe('the main resource', () => {
  it('PYTHON: the pyFile jobClass names, with or without .py; the others go beside it', () => {
    expect(localMainResource(spec(), RUNNER())).toEqual({
      main: file('main.py'),
      extraJars: [],
      extraPyFiles: [file('helpers.py')],
    });
    expect(localMainResource(spec({}, { jobClass: 'main.py' }), RUNNER()).main).toBe(file('main.py'));
  });

  it('PYTHON: an absolute path to an existing .py file works without uploading it', () => {
    expect(
      localMainResource(
        spec({}, { jobClass: file('main.py'), artifacts: { jars: [], files: [], pyFiles: [] } }),
        RUNNER(),
      ).main,
    ).toBe(file('main.py'));
  });

  it('SCALA: the first jar with jobClass as main class; a runner runs the runner with every pyFile', () => {
    expect(localMainResource(scala(), RUNNER())).toEqual({
      main: file('app.jar'),
      mainClass: 'org.example.App',
      extraJars: [file('lib.jar')],
      extraPyFiles: [],
    });
    expect(localMainResource(spec({ role: 'runner' }), RUNNER())).toEqual({
      main: RUNNER(),
      extraJars: [],
      extraPyFiles: [file('helpers.py'), file('main.py')],
    });
  });

  it.each([
    [
      'a relative artifact path',
      spec({}, { artifacts: { jars: ['lib.jar'], files: [], pyFiles: [] } }),
      'artifact path lib.jar is not absolute',
    ],
    ['a PYTHON job without jobClass', spec({}, { jobClass: undefined }), 'PYTHON job has no jobClass'],
    [
      'a PYTHON main file not uploaded',
      spec({}, { jobClass: 'other' }),
      "PYTHON job's main file other is not among its pyFiles (helpers.py, main.py)",
    ],
    ['a SCALA job without jobClass', scala({ jobClass: '' }), 'SCALA job has no jobClass'],
    [
      'a SCALA job without jars',
      scala({ artifacts: { jars: [], files: [], pyFiles: [] } }),
      'SCALA job has no jar to find its main class org.example.App in',
    ],
    [
      'a main file that is gone',
      scala({ artifacts: { jars: [file('gone.jar')], files: [], pyFiles: [] } }),
      `main resource ${file('gone.jar')} does not exist`,
    ],
  ])('refuses %s with an InvalidSpecError', (_, s, message) => {
    expect(() => localMainResource(s, RUNNER())).toThrow(InvalidSpecError);
    expect(() => localMainResource(s, RUNNER())).toThrow(message);
  });
});

describe('Spark properties', () => {
  it('the event log goes to the driver folder; jobConfig wins over the memory settings, not over loopback', () => {
    const conf = localSparkConf(
      spec(
        {},
        {
          memorySettings: { dynamicAllocation: false, driverMemory: '2g', executors: 2 },
          jobConfig: { 'spark.driver.memory': '3g', 'spark.driver.bindAddress': '0.0.0.0' },
        },
      ),
      config,
    );
    expect(conf).toEqual({
      'spark.eventLog.enabled': 'true',
      'spark.eventLog.dir': `file://${path.join(tmp, 'drivers', 'job-abc-1', 'eventlog')}`,
      'spark.eventLog.rolling.enabled': 'true',
      'spark.executor.instances': '2',
      'spark.driver.memory': '3g',
      'spark.dynamicAllocation.enabled': 'false',
      'spark.driver.host': '127.0.0.1',
      'spark.driver.bindAddress': '127.0.0.1',
    });
  });
});

describe('the Spark UI', () => {
  it('listens on the port launch chose, whatever jobConfig says, with no kill buttons', () => {
    const conf = localSparkConf(
      spec({}, { jobConfig: { 'spark.ui.port': '4040', 'spark.ui.killEnabled': 'true' } }),
      config,
      { port: 45123 },
    );
    expect(conf).toMatchObject({ 'spark.ui.port': '45123', 'spark.ui.killEnabled': 'false' });
    expect(conf['spark.ui.filters']).toBeUndefined();
    expect(localSparkConf(spec(), config)['spark.ui.port']).toBeUndefined();
  });

  it('puts the Host check in front of it, after the filters and classpath the job set', () => {
    const ui = { port: 45123, filterClasses: '/stack/jvm/ui-filter-1' };
    expect(localSparkConf(spec(), config, ui)).toMatchObject({
      'spark.ui.filters': 'sparkorchestrator.LoopbackHostFilter',
      'spark.driver.extraClassPath': '/stack/jvm/ui-filter-1',
    });
    const own = { 'spark.ui.filters': 'com.example.Auth', 'spark.driver.extraClassPath': '/opt/x.jar' };
    expect(localSparkConf(spec({}, { jobConfig: own }), config, ui)).toMatchObject({
      'spark.ui.filters': 'com.example.Auth,sparkorchestrator.LoopbackHostFilter',
      'spark.driver.extraClassPath': '/opt/x.jar:/stack/jvm/ui-filter-1',
    });
  });
});

describe('sparkSubmitArgs', () => {
  it('SCALA: spark-submit of SPARK_HOME in local[N] with class, conf, driver memory, packages, jars and files', () => {
    const s = scala({
      name: '',
      memorySettings: { dynamicAllocation: false, driverMemory: '2g' },
      packages: ['org.postgresql:postgresql:42.7.4', 'com.example:util:1.0'],
      artifacts: { jars: [file('app.jar'), file('lib.jar')], files: [file('app.conf')], pyFiles: [] },
      args: ['10', '$HOME'],
    });
    const eventLog = `file://${path.join(tmp, 'drivers', 'job-abc-1', 'eventlog')}`;
    expect(sparkSubmitArgs(s, config, RUNNER())).toEqual([
      '/opt/spark/bin/spark-submit',
      '--master',
      'local[3]',
      '--name',
      'job-abc-1',
      '--class',
      'org.example.App',
      '--conf',
      'spark.eventLog.enabled=true',
      '--conf',
      `spark.eventLog.dir=${eventLog}`,
      '--conf',
      'spark.eventLog.rolling.enabled=true',
      '--conf',
      'spark.driver.memory=2g',
      '--conf',
      'spark.dynamicAllocation.enabled=false',
      '--conf',
      'spark.driver.host=127.0.0.1',
      '--conf',
      'spark.driver.bindAddress=127.0.0.1',
      '--driver-memory',
      '2g',
      '--packages',
      'org.postgresql:postgresql:42.7.4,com.example:util:1.0',
      '--jars',
      file('lib.jar'),
      '--files',
      file('app.conf'),
      file('app.jar'),
      '10',
      '$HOME',
    ]);
  });

  it('PYTHON: the other pyFiles go to --py-files, the main file and its args last; no --driver-memory unless set', () => {
    const argv = sparkSubmitArgs(spec(), config, RUNNER());
    expect(argv.slice(-4)).toEqual(['--py-files', file('helpers.py'), file('main.py'), 'in.txt']);
    expect(argv).not.toContain('--driver-memory');
    expect(argv).not.toContain('--class');
    expect(argv[argv.indexOf('--name') + 1]).toBe('wordcount');
  });

  it('Python drivers (applications and runners) get a Python environment; SCALA applications do not', () => {
    expect(usesPython(spec())).toBe(true);
    expect(usesPython(spec({ role: 'runner' }, { language: 'SCALA' }))).toBe(true);
    expect(usesPython(scala())).toBe(false);
  });
});
