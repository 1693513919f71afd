// Runs the container of a pod manifest as a local process, the way a kubelet would start it: its env
// resolved (values, secretKeyRef from the given secrets, fieldRef status.podIP), $(VAR) references in
// args expanded and `$$` unescaped as Kubernetes does, the image's /opt/spark mapped to a local Spark.
// Tests run the spark-submit command the k8s adapter generates with it, changing only what a laptop
// cannot be (the master, the driver's DNS name) and adding what the driver image holds (its jars).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { V1Pod, V1Secret } from '@kubernetes/client-node';
import { TEST_JVM_OPTIONS } from './jvm-options';

export interface PodRunOptions {
  /** The Spark installation standing for the image's /opt/spark. */
  sparkHome: string;
  /** Secrets the env may refer to (their stringData or data). */
  secrets?: V1Secret[];
  /** status.podIP. Default 127.0.0.1. */
  podIP?: string;
  /** Replaces the value after these flags (e.g. --master local[1]). */
  flags?: Record<string, string>;
  /** Replaces or adds --conf key=value pairs (spark.driver.host=127.0.0.1, the image's jars as extraClassPath). */
  conf?: Record<string, string>;
  /** More environment (e.g. PYSPARK_PYTHON), over the pod's. */
  env?: Record<string, string>;
  /** Folders of the image mapped to local ones, by prefix in every argument (e.g. the runner's folder). */
  paths?: Record<string, string>;
  /** The container's working folder (spark-submit downloads --py-files there). Default: this process's. */
  cwd?: string;
  timeoutMs?: number;
}

export interface PodRunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  argv: string[];
}

function secretValue(secrets: V1Secret[], name: string, key: string): string | undefined {
  const s = secrets.find((x) => x.metadata?.name === name);
  if (s?.stringData?.[key] !== undefined) return s.stringData[key];
  const d = s?.data?.[key];
  return d === undefined ? undefined : Buffer.from(d, 'base64').toString('utf8');
}

/** Kubernetes' expansion of a command or arg: $(VAR) of a defined variable, $$ → $, anything else as is. */
export function expandK8s(s: string, env: Record<string, string>): string {
  return s.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, name: string | undefined) =>
    m === '$$' ? '$' : name !== undefined && name in env ? env[name] : m,
  );
}

/** The argv and environment the pod's first container would run with, with the given changes. */
export function podCommand(pod: V1Pod, o: PodRunOptions): { argv: string[]; env: Record<string, string> } {
  const c = pod.spec!.containers[0];
  const env: Record<string, string> = {};
  for (const e of c.env ?? []) {
    if (e.value !== undefined) env[e.name] = expandK8s(e.value, env);
    else if (e.valueFrom?.fieldRef?.fieldPath === 'status.podIP') env[e.name] = o.podIP ?? '127.0.0.1';
    else if (e.valueFrom?.secretKeyRef) {
      const { name, key } = e.valueFrom.secretKeyRef;
      const v = secretValue(o.secrets ?? [], name!, key);
      if (v === undefined) throw new Error(`pod refers to secret ${name} key ${key}, which was not given`);
      env[e.name] = v;
    }
  }
  const argv = [...(c.command ?? []), ...(c.args ?? [])].map((a) =>
    Object.entries(o.paths ?? {}).reduce((x, [from, to]) => x.split(from).join(to), expandK8s(a, env)),
  );
  argv[0] = argv[0].replace(/^\/opt\/spark\//, `${o.sparkHome}/`);
  const conf = { ...(o.conf ?? {}) };
  for (let i = 1; i < argv.length - 1; i++) {
    const flag = argv[i];
    if (o.flags && flag in o.flags) argv[i + 1] = o.flags[flag];
    if (flag === '--conf') {
      const key = argv[i + 1].slice(0, argv[i + 1].indexOf('='));
      if (key in conf) {
        argv[i + 1] = `${key}=${conf[key]}`;
        delete conf[key];
      }
    }
  }
  // Conf not in the command goes right after spark-submit.
  argv.splice(1, 0, ...Object.entries(conf).flatMap(([k, v]) => ['--conf', `${k}=${v}`]));
  return { argv, env: { ...env, ...(o.env ?? {}) } };
}

/** Starts the pod's command (its output on the child's stdout and stderr). */
export function startPod(pod: V1Pod, o: PodRunOptions): { child: ChildProcessWithoutNullStreams; argv: string[] } {
  const { argv, env } = podCommand(pod, o);
  const base = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    JAVA_HOME: process.env.JAVA_HOME ?? '',
    // spark-submit's JVM (a driver pod's driver): started lighter, as the tests' other Spark JVMs
    // (testkit/jvm-options.ts says why); a pod's own SPARK_SUBMIT_OPTS wins.
    SPARK_SUBMIT_OPTS: TEST_JVM_OPTIONS,
  };
  const child = spawn(argv[0], argv.slice(1), {
    env: { ...base, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
    cwd: o.cwd,
  });
  child.stdin.end();
  return { child, argv };
}

/** Runs the pod's command to its end (killed after timeoutMs), collecting its output. */
export function runPod(pod: V1Pod, o: PodRunOptions): Promise<PodRunResult> {
  return new Promise((resolve, reject) => {
    const { child, argv } = startPod(pod, o);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-200_000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 180_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, argv });
    });
  });
}
