// Logs of an ended application's containers from YARN's aggregated log files, for clusters whose hadoopConf turns
// yarn.log-aggregation-enable on (the NodeManagers then move ended containers' logs to
// yarn.nodemanager.remote-app-log-dir on the default filesystem and stop serving them). The files are Hadoop's
// TFile format; Hadoop's own reader (AggregatedLogFormat, in pyspark's hadoop-client-api jar) reads them, in the
// small Java program below, compiled once and run with the driver's Hadoop configuration folder on its
// classpath. Only stdout and stderr come out (launch_container.sh holds the container's environment, secrets
// included). What it printed is kept in the driver's folder once aggregation has SUCCEEDED: it never changes.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { childEnv } from '../local/child-env';
import { writeFileAtomic } from '../local/driver-files';
import type { YarnApp } from './rest';
import type { YarnAdapterOptions } from './submit-args';

/** The log files read from the aggregated files. */
export const AGGREGATED_FILES = ['stdout', 'stderr'] as const;
/** Where the read logs are kept in the driver's folder. */
const CACHE = 'aggregated-logs';

/** Prints `<container>\t<file>\t<length>\n<bytes>\n` for each stdout and stderr of the application's containers. */
const READER = `import java.io.*;
import java.util.*;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.*;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.logaggregation.AggregatedLogFormat;

public class AggregatedLogs {
  public static void main(String[] args) throws Exception {
    Configuration conf = new YarnConfiguration();
    String appId = args[0];
    Set<String> wanted = new HashSet<>(Arrays.asList(args).subList(1, args.length));
    Path root = new Path(conf.get("yarn.nodemanager.remote-app-log-dir", "/tmp/logs"));
    FileSystem fs = root.getFileSystem(conf);
    List<FileStatus> dirs = new ArrayList<>();
    // <root>/<user>/bucket-<suffix>/<bucket>/<appId> (Hadoop 3.3), <root>/<user>/<suffix>/<appId> (before).
    for (String pattern : new String[] {"*/*/*/" + appId, "*/*/" + appId}) {
      FileStatus[] found = fs.globStatus(new Path(root, pattern));
      if (found != null) dirs.addAll(Arrays.asList(found));
    }
    OutputStream out = new BufferedOutputStream(System.out);
    byte[] buf = new byte[65536];
    for (FileStatus dir : dirs) {
      for (FileStatus node : fs.listStatus(dir.getPath())) {
        if (!node.isFile() || node.getPath().getName().endsWith(".tmp")) continue;
        AggregatedLogFormat.LogReader reader = new AggregatedLogFormat.LogReader(conf, node.getPath());
        try {
          AggregatedLogFormat.LogKey key = new AggregatedLogFormat.LogKey();
          DataInputStream value = reader.next(key);
          while (value != null) {
            while (true) {
              String type;
              try { type = value.readUTF(); } catch (EOFException e) { break; }
              long length = Long.parseLong(value.readUTF());
              boolean keep = wanted.contains(type);
              if (keep) out.write((key + "\\t" + type + "\\t" + length + "\\n").getBytes("UTF-8"));
              for (long left = length; left > 0; ) {
                int n = value.read(buf, 0, (int) Math.min(buf.length, left));
                if (n < 0) break;
                if (keep) out.write(buf, 0, n);
                left -= n;
              }
              if (keep) out.write('\\n');
            }
            key = new AggregatedLogFormat.LogKey();
            value = reader.next(key);
          }
        } finally {
          reader.close();
        }
      }
    }
    out.flush();
  }
}
`;

/** Aggregation statuses of an ended application whose logs are still on their way. */
export const AGGREGATING = ['NOT_START', 'RUNNING', 'RUNNING_WITH_FAILURE'];

/** Whether the cluster's client configuration turns log aggregation on. */
export const aggregationOn = (o: YarnAdapterOptions): boolean =>
  o.cluster.hadoopConf?.['yarn.log-aggregation-enable']?.trim().toLowerCase() === 'true';

/** Container id → file → its text. */
export type ContainerLogs = Map<string, Map<string, string>>;

/** Parses the reader's output. */
export function parseAggregated(out: Buffer): ContainerLogs {
  const logs: ContainerLogs = new Map();
  let at = 0;
  while (at < out.length) {
    const eol = out.indexOf(0x0a, at);
    if (eol < 0) break;
    const [container, file, length] = out.subarray(at, eol).toString('utf8').split('\t');
    const n = Number(length);
    if (!container || !file || !Number.isSafeInteger(n)) break;
    const text = out.subarray(eol + 1, eol + 1 + n).toString('utf8');
    if (!logs.has(container)) logs.set(container, new Map());
    logs.get(container)!.set(file, text);
    at = eol + 1 + n + 1;
  }
  return logs;
}

/** A short-lived JVM: the C1 compiler alone and the serial collector start it with about half the CPU. */
const ONE_SHOT_JVM = ['-Xmx256m', '-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'];

const run = (cmd: string, args: string[], env: Record<string, string>, what: string) =>
  new Promise<Buffer>((resolve, reject) =>
    execFile(cmd, args, { encoding: 'buffer', maxBuffer: 256 * 2 ** 20, timeout: 120_000, env }, (e, stdout, stderr) =>
      e ? reject(new Error(`${what}: ${String(stderr).slice(-2000)}`)) : resolve(stdout),
    ),
  );

/**
 * The reader, compiled once into STACK_DIR/yarn (a folder named by its source's content), so a read starts one JVM
 * and compiles nothing. Each worker compiles into a folder of its own, then renames it in place: a concurrent
 * compile of the same source loses the rename and uses the winner's classes.
 */
async function readerClasses(o: YarnAdapterOptions, cp: string, env: Record<string, string>): Promise<string> {
  const hash = createHash('sha256').update(READER).digest('hex').slice(0, 16);
  const dir = path.join(o.config.STACK_DIR, 'yarn', `aggregated-logs-classes-${hash}`);
  if (existsSync(path.join(dir, 'AggregatedLogs.class'))) return dir;
  const tmp = `${dir}.${process.pid}.tmp`;
  await fs.rm(tmp, { recursive: true, force: true });
  await fs.mkdir(tmp, { recursive: true });
  await writeFileAtomic(path.join(tmp, 'AggregatedLogs.java'), READER);
  const javac = env.JAVA_HOME ? path.join(env.JAVA_HOME, 'bin', 'javac') : 'javac';
  await run(
    javac,
    ['-J-XX:TieredStopAtLevel=1', '-cp', cp, '-d', tmp, path.join(tmp, 'AggregatedLogs.java')],
    env,
    'compiling the aggregated-log reader',
  );
  await fs.rename(tmp, dir).catch(() => fs.rm(tmp, { recursive: true, force: true }));
  return dir;
}

/**
 * The application's stdout and stderr by container, once its logs are aggregated; undefined while they are not (yet),
 * or when the cluster does not aggregate. `driverDir`: the driver's folder (its `conf` is the Hadoop configuration).
 */
export async function aggregatedLogs(
  o: YarnAdapterOptions,
  driverDir: string,
  app: YarnApp,
): Promise<ContainerLogs | undefined> {
  // The id goes into a path pattern: nothing but an application id.
  if (!aggregationOn(o) || !/^application_\d+_\d+$/.test(app.id)) return undefined;
  const cache = path.join(driverDir, CACHE);
  const kept = await fs.readFile(cache).catch(() => undefined);
  if (kept) return parseAggregated(kept);
  if (!['SUCCEEDED', 'FAILED', 'TIME_OUT'].includes(app.logAggregationStatus ?? '')) return undefined;
  const cp = [path.join(driverDir, 'conf'), path.join(o.config.SPARK_HOME, 'jars', '*')].join(path.delimiter);
  // What a JVM needs of the worker's environment (the drivers' allow-list): none of the service's settings or secrets.
  const env = childEnv('driver');
  const classes = await readerClasses(o, cp, env);
  const out = await run(
    env.JAVA_HOME ? path.join(env.JAVA_HOME, 'bin', 'java') : 'java',
    [...ONE_SHOT_JVM, '-cp', [classes, cp].join(path.delimiter), 'AggregatedLogs', app.id, ...AGGREGATED_FILES],
    env,
    `reading aggregated logs of ${app.id}`,
  );
  // Complete once SUCCEEDED; a failed or timed-out aggregation may still be filled in by a late node.
  if (app.logAggregationStatus === 'SUCCEEDED') {
    const tmp = `${cache}.${process.pid}.tmp`;
    await fs.writeFile(tmp, out).then(
      () => fs.rename(tmp, cache),
      () => undefined,
    );
  }
  return parseAggregated(out);
}
