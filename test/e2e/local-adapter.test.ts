// The local cluster adapter against real spark-submit runs (pyspark from the dev stack, Java 17).
// Spark start-up costs seconds on two cores, so the Spark cases run concurrently. Last, the adapter contract
// (testkit/adapter-contract.ts), with what only a local driver has: an SQL engine's folder, its process group,
// its state outside the folder.
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLocalAdapter, type LocalAdapterConfig } from '../../activities/adapters/local/adapter';
import { DRIVER_FILES } from '../../activities/adapters/local/driver-files';
import { summarizeFailure } from '../../activities/adapters/local/logs';
import { sqlStateDir } from '../../activities/adapters/local/sql-engine';
import { pythonFor } from '../../activities/adapters/local/python-env';
import { isFinalPhase, type ClusterAdapter, type DriverSpec, type DriverStatus } from '../../domain/driver';
import type { SparkSpec } from '../../domain/types';
import { loadConfig, ROOT } from '../../lib/config';
import { eventually } from '../harness';
import { alive, groupMembers, noneRunning } from '../../testkit/proc-groups';
import { sparkSpec } from '../../testkit/spark-spec';
import { adapterContract, contractSpec, TEST_JVM_OPTIONS } from '../../testkit/adapter-contract';

const run = promisify(execFile);

let tmp: string;
let config: LocalAdapterConfig;
let adapter: ClusterAdapter;
const launched = new Set<string>();

beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'local-adapter-'));
  const base = loadConfig();
  config = {
    SPARK_HOME: base.SPARK_HOME,
    PYTHON: base.PYTHON,
    DRIVER_DIR: path.join(tmp, 'drivers'),
    STACK_DIR: path.join(tmp, 'stack'),
    LOCAL_SPARK_THREADS: 2,
  };
  adapter = createLocalAdapter(config, { runnerPath: path.join(tmp, 'no-runner.py') });
});

afterAll(async () => {
  // Whatever a failed assertion left running must not outlive the test run.
  if (adapter) for (const id of launched) await adapter.remove(id);
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

const spec = (driverId: string, spark: Partial<SparkSpec>, more: Partial<DriverSpec> = {}): DriverSpec => {
  launched.add(driverId);
  return {
    driverId,
    role: 'application',
    env: {},
    labels: { jobId: driverId },
    ...more,
    spark: sparkSpec({
      name: `test ${driverId}`,
      clusterName: 'default',
      ...spark,
      // Less CPU on the drivers' JVM start-up (testkit/adapter-contract.ts).
      jobConfig: { 'spark.driver.extraJavaOptions': TEST_JVM_OPTIONS, ...spark.jobConfig },
    }),
  };
};

const write = (rel: string, content: string): string => {
  const p = path.join(tmp, rel);
  mkdirSync(path.dirname(p), { recursive: true });
  writeFileSync(p, content);
  return p;
};

const untilFinal = (id: string, a: ClusterAdapter = adapter): Promise<DriverStatus> =>
  eventually(
    async () => {
      const s = await a.status(id);
      return isFinalPhase(s.phase) && s;
    },
    150_000,
    250,
  );

const allLines = async (id: string): Promise<string[]> =>
  (await adapter.logs(id, { from: 0, size: 1_000_000 }))[0]?.log ?? [];

/** Pids whose command line contains the marker (pgrep exits 1 when there are none). */
const pgrep = (pattern: string): number[] => {
  try {
    return execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
};

/** A process and all its descendants, from /proc. */
const processTree = (root: number): number[] => {
  const parent = new Map<number, number>();
  for (const e of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      parent.set(Number(e), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // ended meanwhile
    }
  }
  const tree = [root];
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, ppid] of parent) {
      if (tree.includes(ppid) && !tree.includes(pid)) {
        tree.push(pid);
        grew = true;
      }
    }
  }
  return tree;
};

describe.concurrent('local adapter: real spark-submit runs', () => {
  it('runs a PySpark application with a helper module, conf and args; logs page by lines', async ({ expect }) => {
    const helper = write('sumsq/helpers.py', 'def square(x):\n    return x * x\n');
    const main = write(
      'sumsq/sum_squares.py',
      [
        'import os, sys',
        'from pyspark.sql import SparkSession',
        'from helpers import square',
        'os.write(2, ("STDOUT=" + os.readlink("/proc/self/fd/1") + "\\n").encode())',
        'spark = SparkSession.builder.getOrCreate()',
        'n = int(sys.argv[1])',
        'print("CONF=" + spark.conf.get("spark.test.marker"))',
        'print("RESULT=%d" % spark.sparkContext.parallelize(range(1, n + 1)).map(square).sum())',
        'spark.stop()',
      ].join('\n'),
    );
    const id = 'job-sumsq-1';
    const s = spec(id, {
      jobClass: 'sum_squares',
      args: ['1000'],
      jobConfig: { 'spark.test.marker': 'from-jobConfig', 'spark.driver.memory': '700m' },
      memorySettings: { dynamicAllocation: false, driverMemory: '600m' },
      artifacts: { jars: [], files: [], pyFiles: [helper, main] },
    });
    const first = await adapter.launch(s);
    expect(['PENDING', 'RUNNING']).toContain(first.phase);
    const command = JSON.parse(readFileSync(path.join(config.DRIVER_DIR, id, DRIVER_FILES.command), 'utf8'));
    // jobConfig wins over memorySettings, and spark-submit gets the winner as --driver-memory.
    expect(command.argv).toContain('spark.driver.memory=700m');
    expect(
      command.argv.slice(command.argv.indexOf('--driver-memory'), command.argv.indexOf('--driver-memory') + 2),
    ).toEqual(['--driver-memory', '700m']);
    expect(command.argv.slice(-2)).toEqual([main, '1000']);

    const done = await untilFinal(id);
    expect(done).toMatchObject({ phase: 'SUCCEEDED', exitCode: 0, appId: expect.stringMatching(/^local-\d+$/) });
    expect(done.startTime).toBeLessThanOrEqual(done.endTime!);
    const lines = await allLines(id);
    // Spark's PythonRunner runs Python unbuffered, so print's text and its newline are two writes, and a log4j line
    // (stderr, the same file) can land between them: the text is looked for within the log, not as a whole line.
    expect(lines.join('\n')).toContain('RESULT=333833500');
    expect(lines.join('\n')).toContain('CONF=from-jobConfig');
    // Python writes to the log itself, not to a pipe that a daemon thread of the JVM may not drain before it
    // exits (a short job's output was lost that way once under load).
    expect(lines).toContain(`STDOUT=${path.join(config.DRIVER_DIR, id, 'driver.log')}`);

    // Paging: [from, from + size), pages joined give the whole log, past the end gives nothing.
    const [page] = await adapter.logs(id, { from: 10, size: 5 });
    expect(page).toEqual({
      name: id,
      type: 'process',
      role: 'driver',
      state: 'SUCCEEDED',
      from: 10,
      logSize: 5,
      fileName: path.join(config.DRIVER_DIR, id, 'driver.log'),
      log: lines.slice(10, 15),
    });
    const pages: string[] = [];
    for (let from = 0; from < lines.length; from += 7)
      pages.push(...(await adapter.logs(id, { from, size: 7 }))[0].log);
    expect(pages).toEqual(lines);
    expect((await adapter.logs(id, { from: lines.length + 3, size: 10 }))[0]).toMatchObject({ logSize: 0, log: [] });

    // Launching a finished driver again starts nothing new; removing it keeps its outcome and its log.
    expect(await adapter.launch(s)).toMatchObject({ phase: 'SUCCEEDED', appId: done.appId });
    await adapter.remove(id);
    expect(await adapter.status(id)).toMatchObject({ phase: 'SUCCEEDED', exitCode: 0 });
    expect(await allLines(id)).toEqual(lines);
  });

  it('runs a SCALA (JVM) application from its jar with --class, a second jar on --jars', async ({ expect }) => {
    const src = path.join(tmp, 'scala-src');
    write(
      'scala-src/demo/SumJob.java',
      `package demo;
import org.apache.spark.sql.SparkSession;
public class SumJob {
  public static void main(String[] args) {
    SparkSession spark = SparkSession.builder().getOrCreate();
    long n = Long.parseLong(args[0]);
    long sum = spark.range(1, n + 1).selectExpr("sum(id * id)").first().getLong(0);
    System.out.println(Helper.label() + "=" + sum);
    spark.stop();
  }
}
`,
    );
    write(
      'scala-src/demo/Helper.java',
      'package demo;\npublic class Helper { public static String label() { return "JVM_RESULT"; } }\n',
    );
    const classes = path.join(tmp, 'scala-classes');
    await run('javac', [
      '-cp',
      path.join(config.SPARK_HOME, 'jars', '*'),
      '-d',
      classes,
      path.join(src, 'demo/SumJob.java'),
      path.join(src, 'demo/Helper.java'),
    ]);
    const mainJar = path.join(tmp, 'sumjob.jar');
    const helperJar = path.join(tmp, 'helper.jar');
    await run('jar', ['cf', mainJar, '-C', classes, 'demo/SumJob.class']);
    await run('jar', ['cf', helperJar, '-C', classes, 'demo/Helper.class']);

    const id = 'job-scala-1';
    await adapter.launch(
      spec(id, {
        language: 'SCALA',
        jobClass: 'demo.SumJob',
        args: ['1000'],
        artifacts: { jars: [mainJar, helperJar], files: [], pyFiles: [] },
      }),
    );
    const done = await untilFinal(id);
    expect(done, (await allLines(id)).slice(-30).join('\n')).toMatchObject({
      phase: 'SUCCEEDED',
      exitCode: 0,
      appId: expect.stringMatching(/^local-\d+$/),
    });
    expect(await allLines(id)).toContain('JVM_RESULT=333833500');
  });

  it('records a failing application exit code and error even after the launching worker has exited', async ({
    expect,
  }) => {
    const marker = randomUUID().slice(0, 8);
    const main = write(
      'fail/failing.py',
      [
        'from pyspark.sql import SparkSession',
        'spark = SparkSession.builder.getOrCreate()',
        `raise ValueError("boom-${marker}")`,
      ].join('\n'),
    );
    const id = 'job-fail-1';
    // A separate Node process launches and exits at once: the driver must outlive it and still record its end.
    const script = write(
      'fail/launch.mts',
      `import { createLocalAdapter } from ${JSON.stringify(path.join(ROOT, 'activities/adapters/local/adapter.ts'))};
const { config, spec } = JSON.parse(process.env.LAUNCH_INPUT ?? '{}');
console.log(JSON.stringify(await createLocalAdapter(config).launch(spec)));
`,
    );
    const s = spec(id, { jobClass: main, artifacts: { jars: [], files: [], pyFiles: [] } });
    const { stdout } = await run(path.join(ROOT, 'node_modules/.bin/tsx'), [script], {
      env: { ...process.env, LAUNCH_INPUT: JSON.stringify({ config, spec: s }) },
    });
    expect(['PENDING', 'RUNNING']).toContain(JSON.parse(stdout.trim().split('\n').pop()!).phase);

    const done = await untilFinal(id);
    expect(done.phase).toBe('FAILED');
    expect(done.exitCode).not.toBe(0);
    expect(done.exitCode).toBeTypeOf('number');
    expect(done.message).toBe(`driver exited with code ${done.exitCode}: ValueError: boom-${marker}`);
    expect(done.endTime).toBeGreaterThanOrEqual(done.startTime!);
  });

  it('starts one process for concurrent launches, and remove leaves no process behind', async ({ expect }) => {
    const marker = `longrun${randomUUID().slice(0, 8)}`;
    const main = write(
      `long/${marker}.py`,
      [
        'import time',
        'from pyspark.sql import SparkSession',
        'spark = SparkSession.builder.getOrCreate()',
        // A Python RDD job starts PySpark's worker daemon, which puts itself into its own process group.
        'print("COUNT=%d" % spark.sparkContext.parallelize(range(100), 2).map(lambda x: x + 1).count(), flush=True)',
        'print("READY", flush=True)',
        'time.sleep(600)',
      ].join('\n'),
    );
    const id = 'job-long-1';
    const s = spec(id, { jobClass: `${marker}.py`, artifacts: { jars: [], files: [], pyFiles: [main] } });
    const both = await Promise.all([adapter.launch(s), adapter.launch(s), adapter.launch(s)]);
    for (const st of both) expect(['PENDING', 'RUNNING']).toContain(st.phase);

    await eventually(async () => (await allLines(id)).includes('READY'), 120_000, 250);
    // One wrapper shell, one JVM, one Python driver process; a restarted worker (a new adapter) sees it running.
    expect(pgrep(`org.apache.spark.deploy.SparkSubmit.*${marker}`)).toHaveLength(1);
    expect(await createLocalAdapter(config).status(id)).toMatchObject({
      phase: 'RUNNING',
      appId: expect.stringMatching(/^local-\d+$/),
    });
    expect(await adapter.launch(s)).toMatchObject({ phase: 'RUNNING' });
    expect(pgrep(`org.apache.spark.deploy.SparkSubmit.*${marker}`)).toHaveLength(1);

    const pid = Number(readFileSync(path.join(config.DRIVER_DIR, id, DRIVER_FILES.pid), 'utf8'));
    const tree = processTree(pid);
    expect(tree.length).toBeGreaterThanOrEqual(3);

    const t0 = Date.now();
    await adapter.remove(id);
    const removeMs = Date.now() - t0;
    expect(pgrep(marker)).toEqual([]);
    await eventually(async () => tree.every((p) => !alive(p)), 5_000, 100);
    expect(await adapter.status(id)).toMatchObject({ phase: 'FAILED', message: 'removed' });
    expect(removeMs).toBeLessThan(6_000);

    await adapter.remove(id); // idempotent
    expect(await adapter.launch(s)).toMatchObject({ phase: 'FAILED', message: 'removed' });
    expect(pgrep(marker)).toEqual([]);
  });

  it('reports a driver killed from outside (no exit code recorded) as failed', async ({ expect }) => {
    // No SparkContext: only the JVM launcher and the Python driver, which is all this case needs.
    const main = write('killed/sleeper.py', 'import time\nprint("SLEEPING", flush=True)\ntime.sleep(600)\n');
    const id = 'job-killed-1';
    await adapter.launch(spec(id, { jobClass: main }));
    await eventually(async () => (await allLines(id)).includes('SLEEPING'), 60_000, 200);
    expect((await adapter.status(id)).phase).toBe('RUNNING');
    const pid = Number(readFileSync(path.join(config.DRIVER_DIR, id, DRIVER_FILES.pid), 'utf8'));
    process.kill(-pid, 'SIGKILL');
    const done = await untilFinal(id);
    expect(done).toMatchObject({
      phase: 'FAILED',
      message: 'driver process ended without recording an exit code (killed?)',
    });
    expect(done.exitCode).toBeUndefined();
  });

  it('runs the runner role: runnerPath as main, pyFiles importable, spec.env in the environment', async ({
    expect,
  }) => {
    const runner = write(
      'runner/runner.py',
      [
        'import os, sys',
        'import runner_helper',
        'print("ENV=" + os.environ["RUNNER_TEST_VAR"])',
        'print("HELPER=" + runner_helper.NAME)',
        'print("PY=" + sys.executable)',
      ].join('\n'),
    );
    const helper = write('runner/pyfiles/runner_helper.py', 'NAME = "helper-ok"\n');
    const id = 'inst-runner-1';
    const a = createLocalAdapter(config, { runnerPath: runner });
    await a.launch(
      spec(
        id,
        { jobClass: undefined, artifacts: { jars: [], files: [], pyFiles: [helper] } },
        { role: 'runner', env: { RUNNER_TEST_VAR: 'from-spec-env' } },
      ),
    );
    const done = await untilFinal(id, a);
    const lines = await allLines(id);
    expect(done.phase, lines.slice(-20).join('\n')).toBe('SUCCEEDED');
    expect(lines).toEqual(expect.arrayContaining(['ENV=from-spec-env', 'HELPER=helper-ok', `PY=${config.PYTHON}`]));
  });

  it('installs pyRequirements into a cached venv that still sees pyspark; a pip failure is an error', async ({
    expect,
  }) => {
    // An offline wheel, built by the stack's Python: pip installs it without an index.
    const wheel = path.join(tmp, 'wheels', 'sohelper-0.1-py3-none-any.whl');
    mkdirSync(path.dirname(wheel), { recursive: true });
    await run(config.PYTHON, [
      '-c',
      `import zipfile
with zipfile.ZipFile(${JSON.stringify(wheel)}, 'w') as z:
    z.writestr('sohelper/__init__.py', 'def answer():\\n    return 42\\n')
    z.writestr('sohelper-0.1.dist-info/METADATA', 'Metadata-Version: 2.1\\nName: sohelper\\nVersion: 0.1\\n')
    z.writestr('sohelper-0.1.dist-info/WHEEL', 'Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')
    z.writestr('sohelper-0.1.dist-info/RECORD', 'sohelper/__init__.py,,\\nsohelper-0.1.dist-info/METADATA,,\\nsohelper-0.1.dist-info/WHEEL,,\\nsohelper-0.1.dist-info/RECORD,,\\n')`,
    ]);
    const [p1, p2] = await Promise.all([pythonFor(config, [wheel]), pythonFor(config, [` ${wheel}`, wheel])]);
    expect(p1).toBe(p2);
    expect(readdirSync(path.join(config.STACK_DIR, 'pyenvs'))).toHaveLength(1);

    // No SparkContext needed: the driver's interpreter is what is under test (and its view of the stack's packages).
    const main = write(
      'req/use_req.py',
      [
        'import sys, sohelper, pyspark, temporalio',
        'print("ANSWER=%d" % sohelper.answer())',
        'print("PY=" + sys.executable)',
      ].join('\n'),
    );
    const id = 'job-req-1';
    await adapter.launch(
      spec(id, { jobClass: 'use_req', pyRequirements: [wheel], artifacts: { jars: [], files: [], pyFiles: [main] } }),
    );
    const done = await untilFinal(id);
    const lines = await allLines(id);
    expect(done.phase, lines.slice(-20).join('\n')).toBe('SUCCEEDED');
    expect(lines.join('\n')).toContain('ANSWER=42'); // within the log: see the first test
    expect(lines.join('\n')).toContain(`PY=${p1}`);
    expect(p1.startsWith(path.join(config.STACK_DIR, 'pyenvs'))).toBe(true);

    const missing = path.join(tmp, 'wheels', 'absent-0.1-py3-none-any.whl');
    await expect(
      adapter.launch(
        spec('job-req-bad', {
          jobClass: 'use_req',
          pyRequirements: [missing],
          artifacts: { jars: [], files: [], pyFiles: [main] },
        }),
      ),
    ).rejects.toThrow(/pip install .* failed[^]*absent-0\.1/);
    expect(await adapter.status('job-req-bad')).toEqual({ phase: 'MISSING' });
  });

  it('rejects specs without a main resource, leaving no driver behind', async ({ expect }) => {
    const py = write('invalid/app.py', 'print(1)\n');
    const cases: [DriverSpec, RegExp][] = [
      [spec('bad-1', { language: 'SCALA', jobClass: 'demo.Main' }), /no jar/],
      [
        spec('bad-2', { language: 'SCALA', jobClass: undefined, artifacts: { jars: [py], files: [], pyFiles: [] } }),
        /no jobClass/,
      ],
      [
        spec('bad-3', { jobClass: 'other', artifacts: { jars: [], files: [], pyFiles: [py] } }),
        /other is not among its pyFiles \(app\.py\)/,
      ],
      [spec('bad-4', { jobClass: undefined }), /no jobClass/],
      [
        spec('bad-5', { jobClass: 'app', artifacts: { jars: [], files: [], pyFiles: ['relative/app.py'] } }),
        /not absolute/,
      ],
      [spec('bad-6', {}, { role: 'runner' }), /no-runner\.py does not exist/],
      [
        spec('bad-7', {
          jobClass: 'app',
          pyRequirements: ['--index-url=http://example.com'],
          artifacts: { jars: [], files: [], pyFiles: [py] },
        }),
        /pip option/,
      ],
    ];
    for (const [s, message] of cases) {
      await expect(adapter.launch(s)).rejects.toThrow(message);
      expect(existsSync(path.join(config.DRIVER_DIR, s.driverId))).toBe(false);
    }
    await expect(
      adapter.launch({
        ...spec('bad-8', { jobClass: 'app', artifacts: { jars: [], files: [], pyFiles: [py] } }),
        driverId: '../escape',
      }),
    ).rejects.toThrow(/invalid driverId/);
  });

  it('makes failure messages from the log: Java exception with root cause, Py4J error', ({ expect }) => {
    const java = [
      '26/11/22 01:53:21 INFO SparkContext: Successfully stopped SparkContext',
      'Exception in thread "main" java.lang.IllegalStateException: no input',
      '\tat demo.Main.main(Main.java:7)',
      'Caused by: java.io.FileNotFoundException: /data/in.csv (No such file or directory)',
      '\tat java.base/java.io.FileInputStream.open0(Native Method)',
      '\t... 3 more',
      '26/11/22 01:53:22 INFO ShutdownHookManager: Shutdown hook called',
    ];
    expect(summarizeFailure(java)).toBe(
      'java.lang.IllegalStateException: no input (caused by java.io.FileNotFoundException: /data/in.csv (No such file or directory))',
    );
    const py4j = [
      'Traceback (most recent call last):',
      '  File "/x/app.py", line 3, in <module>',
      '    spark.read.csv("/nope").collect()',
      '26/11/22 01:53:21 WARN Something: interleaved',
      'py4j.protocol.Py4JJavaError: An error occurred while calling o31.collect.',
      ': org.apache.spark.SparkException: Job aborted due to stage failure',
      '\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:2856)',
    ];
    expect(summarizeFailure(py4j)).toBe(
      'py4j.protocol.Py4JJavaError: An error occurred while calling o31.collect. org.apache.spark.SparkException: Job aborted due to stage failure',
    );
    expect(summarizeFailure(['26/11/22 01:53:21 ERROR SparkContext: Error initializing SparkContext.', 'bye'])).toBe(
      'ERROR SparkContext: Error initializing SparkContext.',
    );
    expect(
      summarizeFailure([
        '26/11/22 02:02:32 WARN Utils: x',
        'Error: Failed to load class demo.Missing.',
        '26/11/22 02:02:33 INFO ShutdownHookManager: bye',
      ]),
    ).toBe('Failed to load class demo.Missing.');
    expect(summarizeFailure(['nothing', 'to see'])).toBeUndefined();
  });

  it('treats unknown drivers as missing', async ({ expect }) => {
    expect(await adapter.status('job-never')).toEqual({ phase: 'MISSING' });
    expect(await adapter.logs('job-never', { from: 0, size: 10 })).toEqual([]);
    await adapter.remove('job-never');
  });
});

describe('the adapter contract on the local adapter', () => {
  const JVM = { 'spark.driver.extraJavaOptions': TEST_JVM_OPTIONS };
  const secretKey = randomBytes(32).toString('hex');
  // The service's adapter of a local cluster: the repository's runner, the key runners' channel secrets come from.
  let contract: ClusterAdapter | undefined;
  const contractAdapter = () => (contract ??= createLocalAdapter({ ...config, SECRET_KEY: secretKey }));
  const pidOf = (driverId: string) =>
    Number(readFileSync(path.join(config.DRIVER_DIR, driverId, DRIVER_FILES.pid), 'utf8'));
  let engineGroup: number[] = [];
  adapterContract(
    () => ({
      adapter: contractAdapter(),
      // No Spark where the cluster says it is.
      broken: createLocalAdapter(
        { ...config, SPARK_HOME: path.join(tmp, 'no-spark'), DRIVER_DIR: path.join(tmp, 'broken-drivers') },
        { runnerPath: path.join(tmp, 'no-runner.py') },
      ),
      spec: (driverId, kind) => {
        launched.add(driverId);
        return contractSpec(path.join(tmp, 'contract'), driverId, kind, 'local', undefined, JVM);
      },
      timeoutMs: 120_000,
      clusterName: 'local',
      sparkConf: JVM,
      temporal: { address: inject('temporalAddress'), namespace: 'default' },
      secretKey,
      checks: {
        engineRunning: async (driverId) => {
          launched.add(driverId);
          const dir = path.join(config.DRIVER_DIR, driverId);
          // One process for the two launches: the wrapper (which leads the group) and the JVM.
          const pid = pidOf(driverId);
          expect(pgrep(`org.apache.spark.deploy.SparkSubmit.*${driverId}`)).toHaveLength(1);
          engineGroup = groupMembers(pid);
          expect(engineGroup.length).toBeGreaterThanOrEqual(2);
          const [entry] = await contractAdapter().logs(driverId, { from: 0, size: 100_000 });
          expect(entry).toMatchObject({ name: driverId, role: 'driver', state: 'RUNNING' });
          expect(entry.log.some((l) => l.includes('HiveThriftServer2 started'))).toBe(true);
          // Nothing outside its folder but its state (metastore and warehouse), which outlives it.
          const wrapperFiles = [DRIVER_FILES.command, DRIVER_FILES.pid, DRIVER_FILES.log, DRIVER_FILES.endpoint];
          const engineFiles = [
            DRIVER_FILES.appId,
            'derby.log',
            DRIVER_FILES.eventLog,
            'operation_logs',
            DRIVER_FILES.ui,
          ];
          expect(readdirSync(dir).sort()).toEqual([...wrapperFiles, ...engineFiles].sort());
          expect(readdirSync(sqlStateDir(config, 'local-contract')).sort()).toEqual(['metastore_db', 'warehouse']);
        },
        engineRemoved: async (driverId) => {
          // Every process of its group is gone, and its record says why.
          await noneRunning(engineGroup, pidOf(driverId), 10_000);
          expect(await contractAdapter().status(driverId)).toMatchObject({ phase: 'FAILED', message: 'removed' });
        },
        runnerReady: async (driverId) => {
          launched.add(driverId);
        },
      },
    }),
    'local-contract',
  );
});
