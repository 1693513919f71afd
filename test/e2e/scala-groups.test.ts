// SCALA groups end to end: HTTP API → group workflow → local adapter → real Spark drivers running runner/
// with the group's jars, Ilum's job interface and the runner's JVM classes on their classpath. Job classes
// (Java and Scala, compiled here against cloud.ilum.job.Job) and Scala code run inside the driver's JVM.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { io as ioClient, type Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, eventually, form, startHarness, type Harness } from '../harness';

const CSV_PACKAGE = 'org.apache.commons:commons-csv:1.10.0';
const START_MS = 300_000;

const JAVA_HEADER = `import cloud.ilum.job.Job;
import org.apache.spark.sql.SparkSession;
import scala.Option;
import scala.collection.immutable.Map;
`;

/** Java and Scala sources by path, for the first jar. */
const MAIN_JAR: Record<string, string> = {
  'jobs/JavaSum.java': `package jobs;
${JAVA_HEADER}
public class JavaSum implements Job {
  public Option<String> run(SparkSession spark, Map<String, Object> config) {
    long n = Long.parseLong(String.valueOf(config.apply("n")));
    return Option.apply(String.valueOf(spark.range(1, n + 1).selectExpr("sum(id)").first().getLong(0)));
  }
}`,
  'jobs/JavaConfig.java': `package jobs;
${JAVA_HEADER}
/** Every config entry with the class of its value, keys sorted. */
public class JavaConfig implements Job {
  public Option<String> run(SparkSession spark, Map<String, Object> config) {
    java.util.TreeMap<String, String> sorted = new java.util.TreeMap<>();
    for (java.util.Map.Entry<String, Object> e : scala.collection.JavaConverters.mapAsJavaMap(config).entrySet()) {
      Object v = e.getValue();
      sorted.put(e.getKey(), v + " (" + (v == null ? "null" : v.getClass().getSimpleName()) + ")");
    }
    return Option.apply(sorted.toString());
  }
}`,
  'jobs/JavaFail.java': `package jobs;
${JAVA_HEADER}
public class JavaFail implements Job {
  public Option<String> run(SparkSession spark, Map<String, Object> config) {
    return validate(config);
  }
  private Option<String> validate(Map<String, Object> config) {
    throw new IllegalArgumentException("bad input: " + config.apply("x"));
  }
}`,
  'jobs/ScalaJobs.scala': `package jobs
import cloud.ilum.job.Job
import org.apache.spark.sql.SparkSession

class ScalaWordCount extends Job {
  override def run(spark: SparkSession, config: Map[String, Any]): Option[String] = {
    val text = config.getOrElse("text", "").toString
    if (text.isEmpty) None
    else {
      val counts = spark.sparkContext.parallelize(text.split(" ").toSeq, 2).map(w => (w, 1)).reduceByKey(_ + _).collect()
      Some(counts.sortBy(_._1).map { case (w, c) => s"$w=$c" }.mkString(","))
    }
  }
}

object ScalaSingleton extends Job {
  override def run(spark: SparkSession, config: Map[String, Any]): Option[String] = Some("from a Scala object")
}
`,
};

/** The second jar: a plain job class and one that needs the group's packages (commons-csv). */
const EXTRA_JAR: Record<string, string> = {
  'extra/Second.java': `package extra;
${JAVA_HEADER}
public class Second implements Job {
  public Option<String> run(SparkSession spark, Map<String, Object> config) {
    return Option.apply("from the second jar");
  }
}`,
  'extra/ParseCsv.java': `package extra;
${JAVA_HEADER}
import org.apache.commons.csv.CSVFormat;
import org.apache.commons.csv.CSVParser;
import org.apache.commons.csv.CSVRecord;

public class ParseCsv implements Job {
  public Option<String> run(SparkSession spark, Map<String, Object> config) {
    try (CSVParser parser = CSVParser.parse(String.valueOf(config.apply("csv")), CSVFormat.DEFAULT)) {
      java.util.List<CSVRecord> records = parser.getRecords();
      return Option.apply(records.size() + " records, last field " + records.get(records.size() - 1).get(1));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}`,
};

let h: Harness;
let work: string;
let jobGroup: string;
let codeGroup: string;
let socket: Socket;
const streamed = new Map<string, { result: string | null; endTime?: number }>();

type Job = { jobId: string; state: string; language: string };
const getGroup = async (id: string, q = '') => (await call(h, 'GET', `/group/${id}${q}`)).body;
const instances = async (id: string) => (await getGroup(id, '?jobStates=STARTING,READY,BUSY')).jobs as Job[];
const waitReady = (id: string, n: number) =>
  eventually(
    async () => {
      const live = await instances(id);
      return live.length === n && live.every((j) => j.state === 'READY') ? live : undefined;
    },
    START_MS,
    500,
  );
const execute = (id: string, body: unknown) => call(h, 'POST', `/group/${id}/job/execute`, body);
const runJob = (jobClass: string, jobConfig: Record<string, unknown> = {}) =>
  execute(jobGroup, { type: 'interactive_job_execute', jobClass, jobConfig });
const runCode = (code: string) => execute(codeGroup, { type: 'interactive_code_execute', code });

/** Compiles `sources` (Java with javac, Scala with the scalac of pyspark's jars) into `<name>.jar`. */
function buildJar(name: string, sources: Record<string, string>, classpath: string[]): Buffer {
  const src = path.join(work, `${name}-src`);
  const classes = path.join(work, `${name}-classes`);
  mkdirSync(classes, { recursive: true });
  for (const [file, text] of Object.entries(sources)) {
    mkdirSync(path.join(src, path.dirname(file)), { recursive: true });
    writeFileSync(path.join(src, file), text);
  }
  const files = Object.keys(sources).map((f) => path.join(src, f));
  const sparkJars = path.join(h.config.SPARK_HOME, 'jars', '*');
  const cp = [sparkJars, ...classpath].join(path.delimiter);
  const scala = files.filter((f) => f.endsWith('.scala'));
  if (scala.length) {
    execFileSync('java', [
      '-cp',
      sparkJars,
      'scala.tools.nsc.Main',
      '-usejavacp',
      '-classpath',
      classpath.join(path.delimiter),
      '-d',
      classes,
      ...scala,
    ]);
  }
  const java = files.filter((f) => f.endsWith('.java'));
  if (java.length)
    execFileSync('javac', ['-nowarn', '--release', '8', '-cp', cp, '-d', classes, ...java], { stdio: 'pipe' });
  const jar = path.join(work, `${name}.jar`);
  execFileSync('jar', ['cf', jar, '-C', classes, '.']);
  return readFileSync(jar);
}

/** commons-csv from Maven Central (through ~/.m2), to compile against; the drivers get it with --packages. */
function fetchCsvJar(): string {
  const dir = path.join(work, 'csv');
  execFileSync('mvn', ['-q', 'dependency:copy', `-Dartifact=${CSV_PACKAGE}`, `-DoutputDirectory=${dir}`], {
    stdio: 'pipe',
  });
  return path.join(
    dir,
    readdirSync(dir).find((f) => f.endsWith('.jar'))!,
  );
}

beforeAll(async () => {
  h = await startHarness();
  work = mkdtempSync(path.join(os.tmpdir(), 'scala-groups-'));
  const jobApi = path.join(h.config.STACK_DIR, 'jvm', 'ilum-job-api-6.0.0.jar');
  const mainJar = buildJar('jobs', MAIN_JAR, [jobApi]);
  const extraJar = buildJar('extra', EXTRA_JAR, [jobApi, fetchCsvJar()]);

  // No language: the default, SCALA. Both groups start at once; drivers are slow to come up.
  const [jobs, code] = await Promise.all([
    call(
      h,
      'POST',
      '/group',
      form(
        {
          name: 'scala-jobs',
          scale: '1',
          packages: CSV_PACKAGE,
          jobConfig: 'spark.sql.shuffle.partitions=2',
          driverMemory: '512m',
        },
        {
          jars: [
            { name: 'jobs.jar', content: mainJar },
            { name: 'extra.jar', content: extraJar },
          ],
        },
      ),
    ),
    call(
      h,
      'POST',
      '/group',
      form({ name: 'scala-notebook', kind: 'CODE', language: 'SCALA', scale: '1', driverMemory: '512m' }),
    ),
  ]);
  expect(jobs.status).toBe(200);
  expect(code.status).toBe(200);
  jobGroup = jobs.body.groupId;
  codeGroup = code.body.groupId;
  socket = ioClient(h.url.replace('/api/v1', '') + '/group-job-results', {
    transports: ['websocket'],
    query: { groupIds: jobGroup },
  });
  socket.on('jobInstanceResult', (r: { jobInstanceId: string; result: string | null; endTime?: number }) => {
    if (r.endTime) streamed.set(r.jobInstanceId, r);
  });
  await new Promise<void>((resolve) => socket.on('connect', () => resolve()));
}, START_MS);

afterAll(async () => {
  socket?.close();
  for (const id of [jobGroup, codeGroup]) if (id) await call(h, 'DELETE', `/group/${id}`);
  await h?.stop();
}, START_MS);

describe('a SCALA JOB group', () => {
  it(
    'is a SCALA group when created without a language, and brings its driver to READY',
    async () => {
      const g = await getGroup(jobGroup);
      expect(g).toMatchObject({
        name: 'scala-jobs',
        kind: 'JOB',
        language: 'SCALA',
        packages: CSV_PACKAGE,
        state: 'ACTIVE',
      });
      const [ready] = await waitReady(jobGroup, 1);
      expect(ready.language).toBe('SCALA');
    },
    START_MS,
  );

  it('runs a Java job class: its result, and jobConfig as a Scala Map', async () => {
    const sum = await runJob('jobs.JavaSum', { n: '100' });
    expect(sum.status).toBe(200);
    expect(sum.body).toMatchObject({
      groupId: jobGroup,
      jobClass: 'jobs.JavaSum',
      result: '5050',
      error: null,
      jobConfig: { n: '100' },
    });
    expect(sum.body.endTime).toBeGreaterThanOrEqual(sum.body.startTime);

    const config = await runJob('jobs.JavaConfig', {
      name: 'ilum',
      n: 3,
      ratio: 0.5,
      on: true,
      list: [1, 'a'],
      nested: { k: 'v' },
    });
    expect(config.body.error).toBeNull();
    expect(config.body.result).toBe(
      '{list=List(1, a) ($colon$colon), n=3 (Integer), name=ilum (String), nested=Map(k -> v) (Map1), on=true (Boolean), ratio=0.5 (Double)}',
    );
  });

  it('runs Scala job classes: a class (None → null) and an object', async () => {
    const count = await runJob('jobs.ScalaWordCount', { text: 'to be or not to be' });
    expect(count.body).toMatchObject({ result: 'be=2,not=1,or=1,to=2', error: null });
    const none = await runJob('jobs.ScalaWordCount', {});
    expect(none.body).toMatchObject({ result: null, error: null });
    expect((await runJob('jobs.ScalaSingleton')).body.result).toBe('from a Scala object');
  });

  it('turns an exception into an error with the JVM stack trace, starting at the job class', async () => {
    const r = await runJob('jobs.JavaFail', { x: 42 });
    expect(r.status).toBe(200);
    expect(r.body.result).toBeNull();
    expect(r.body.error.message).toBe('java.lang.IllegalArgumentException: bad input: 42');
    const frames = (r.body.error.stackTrace as string).split('\n').filter((l) => l.trim().startsWith('at '));
    expect(frames.map((l) => l.trim().replace(/:\d+\)$/, ')'))).toEqual([
      'at jobs.JavaFail.validate(JavaFail.java)',
      'at jobs.JavaFail.run(JavaFail.java)',
    ]);
  });

  it('answers an unknown class with an error naming it', async () => {
    const r = await runJob('jobs.NoSuchJob');
    expect(r.status).toBe(200);
    expect(r.body.result).toBeNull();
    expect(r.body.error.message).toContain('jobs.NoSuchJob');
    expect(r.body.error.message).toMatch(/ClassNotFoundException/);
  });

  it("runs a class from the second jar, and one that uses the group's packages", async () => {
    expect((await runJob('extra.Second')).body.result).toBe('from the second jar');
    const csv = await runJob('extra.ParseCsv', { csv: 'a,b\nc,"d,e"\n' });
    expect(csv.body).toMatchObject({ result: '2 records, last field d,e', error: null });
  });

  it('delivers submitted executions on the result stream', async () => {
    const ids = await Promise.all(
      ['one two', 'three'].map(async (text) => {
        const r = await call(h, 'POST', `/group/${jobGroup}/job/submit`, {
          jobClass: 'jobs.ScalaWordCount',
          jobConfig: { text },
        });
        expect(r.status).toBe(200);
        return r.body.jobInstanceId as string;
      }),
    );
    await eventually(async () => ids.every((id) => streamed.has(id)), 60_000);
    expect(ids.map((id) => streamed.get(id)!.result)).toEqual(['one=1,two=1', 'three=1']);
  });

  it('answers an execution without a job class with 409', async () => {
    const r = await execute(jobGroup, { jobConfig: {} });
    expect(r.status).toBe(409);
    expect(r.body.message).toMatch(/cloud\.ilum\.job\.Job/);
  });

  it(
    'rescales 1 → 2, and replaces a SCALA driver killed with SIGKILL',
    async () => {
      expect((await call(h, 'POST', `/group/${jobGroup}/rescale/2`)).status).toBe(200);
      const [victim] = await waitReady(jobGroup, 2);
      const pid = Number(readFileSync(path.join(h.config.DRIVER_DIR, `inst-${victim.jobId}`, 'pid'), 'utf8'));
      // The whole process group: spark-submit's JVM and the Python runner under it.
      process.kill(-pid, 'SIGKILL');
      await eventually(
        async () =>
          ((await getGroup(jobGroup, '?jobStates=FAILED')).jobs as Job[]).some((j) => j.jobId === victim.jobId),
        60_000,
      );
      expect((await runJob('extra.Second')).body.result).toBe('from the second jar');
      const ready = await waitReady(jobGroup, 2);
      expect(ready.map((j) => j.jobId)).not.toContain(victim.jobId);
      expect((await runJob('jobs.JavaSum', { n: '10' })).body.result).toBe('55');
    },
    START_MS,
  );
});

describe('a SCALA CODE group', () => {
  it(
    'keeps a Scala interpreter per driver: definitions persist between executions',
    async () => {
      await waitReady(codeGroup, 1);
      const def = await runCode('val words = Seq("to", "be", "or", "not", "to", "be")');
      expect(def.body).toMatchObject({ result: null, error: null });
      expect((await runCode('words.distinct.size')).body.result).toBe('4');
      // spark and sc are bound; a function defined here runs on executors.
      await runCode('def shout(w: String) = w.toUpperCase');
      const counted = await runCode('sc.parallelize(words).map(shout).countByValue().toSeq.sortBy(_._1).mkString(",")');
      expect(counted.body).toMatchObject({ result: '(BE,2),(NOT,1),(OR,1),(TO,2)', error: null });
      expect((await runCode('spark.range(3).count()')).body.result).toBe('3');
    },
    START_MS,
  );

  it('returns printed output when the code ends without a value', async () => {
    const r = await runCode('println(s"${words.size} words")\nprintln("done")');
    expect(r.body).toMatchObject({ result: '6 words\ndone\n', error: null });
  });

  it("returns a compile error with the compiler's text", async () => {
    const r = await runCode('words.nosuch');
    expect(r.status).toBe(200);
    expect(r.body.result).toBeNull();
    expect(r.body.error.message).toMatch(/error: value nosuch is not a member of Seq\[String\]/);
    expect(r.body.error.stackTrace).toContain('words.nosuch');
  });

  it('returns a runtime exception as an error, and the interpreter goes on', async () => {
    const r = await runCode('require(words.isEmpty, "words must be empty")');
    expect(r.body.result).toBeNull();
    expect(r.body.error.message).toBe('java.lang.IllegalArgumentException: requirement failed: words must be empty');
    expect(r.body.error.stackTrace).toMatch(/^java\.lang\.IllegalArgumentException: requirement failed/);
    expect((await runCode('words.size')).body.result).toBe('6');
  });
});
