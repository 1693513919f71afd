// A kubelet stand-in for the real control plane of testkit/kube/control-plane.ts: it registers a Node (127.0.0.1,
// a capacity, Ready), binds the Pending pods of its namespaces to it through pods/binding as a scheduler
// would (or marks them PodScheduled=False, Unschedulable, when their requests do not fit what is left),
// runs bound pods as local processes (testkit/pod-runner.ts), reports their status through the API server
// (phases, container states, exit codes, reasons; a process killed by SIGKILL that we did not kill is
// OOMKilled, exit code 137), serves the node's container-log endpoint over HTTPS so `pods/log` works
// through the API server, and finishes deletions (kills the process, then deletes the pod for good).
// Executor pods Spark creates run as Spark's image would run them (its entrypoint's `executor` command).
import { type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { V1Pod, V1Secret } from '@kubernetes/client-node';
import { TEST_JVM_OPTIONS } from '../jvm-options';
import { startPod, type PodRunOptions } from '../pod-runner';
import { freePort } from '../servers';
import { sleep } from '../wait';
import { kubeRequest, serviceAccountToken, type ControlPlaneInfo } from './control-plane';

/** What the kubelet does with a pod bound to it. */
export type PodPlan =
  /** Run its first container as a local process. */
  | { run: Omit<PodRunOptions, 'secrets'> }
  /**
   * Running with these log lines (no process): until deleted, or until exitAfterMs, then ends with exitCode
   * (default 0) and reason (default Completed or Error; e.g. OOMKilled).
   */
  | { hold: string[]; exitAfterMs?: number; exitCode?: number; reason?: string }
  /** The container never starts (waiting with this reason, default ContainerCreating). */
  | { waiting: string };

export interface PodContext {
  /** The pod's service-account token (TokenRequest bound to the pod) and the CA, as files. */
  tokenFile?: string;
  caFile: string;
  /** The API server's URL. */
  apiServer: string;
  /** Free loopback ports for the pod's use (a driver's RPC and block manager ports). */
  ports: [number, number];
}

export interface KubeletOptions {
  cp: ControlPlaneInfo;
  /** The node's name; one kubelet per test file. */
  nodeName: string;
  /** Namespaces whose pods this kubelet binds and runs. */
  namespaces: string[];
  /** Folder for its certificate, tokens and the containers' logs. */
  dir: string;
  /** What the node can give pods. Default 8 CPUs, 16 GiB. */
  capacity?: { cpu: number; memoryMiB: number };
  /** What to do with a pod; executor pods (spark-role=executor) are run by `executor` when given. */
  plan: (pod: V1Pod, ctx: PodContext) => PodPlan | Promise<PodPlan>;
  /** How Spark executor pods run: the Spark home and extra classpath standing for the image's jars. */
  executor?: { sparkHome: string; extraClassPath?: string; env?: Record<string, string> };
  /** Poll interval. Default 200 ms. */
  intervalMs?: number;
}

interface Running {
  child?: ChildProcess;
  logFile: string;
  container: string;
  started: boolean;
  waiting?: string;
  killedByUs?: boolean;
  done?: boolean;
}

export interface Kubelet {
  nodeName: string;
  port: number;
  /** Log file of a pod's container, once started. */
  logOf(namespace: string, pod: string): string | undefined;
  stop(): Promise<void>;
}

const quantity = (q: string | undefined, unit: 'cpu' | 'mem'): number => {
  if (!q) return 0;
  const m = /^([0-9.]+)([a-zA-Z]*)$/.exec(q);
  if (!m) return 0;
  const n = Number(m[1]);
  if (unit === 'cpu') return m[2] === 'm' ? n / 1000 : n;
  const f: Record<string, number> = {
    '': 1 / 2 ** 20,
    Ki: 1 / 1024,
    Mi: 1,
    Gi: 1024,
    Ti: 2 ** 20,
    k: 1e3 / 2 ** 20,
    M: 1e6 / 2 ** 20,
    G: 1e9 / 2 ** 20,
  };
  return n * (f[m[2]] ?? 1);
};

const requestsOf = (pod: V1Pod) =>
  (pod.spec?.containers ?? []).reduce(
    (acc, c) => ({
      cpu: acc.cpu + quantity(c.resources?.requests?.cpu as string | undefined, 'cpu'),
      mem: acc.mem + quantity(c.resources?.requests?.memory as string | undefined, 'mem'),
    }),
    { cpu: 0, mem: 0 },
  );

/** A self-signed certificate for the node's HTTPS endpoint (the API server does not verify it). */
function nodeCert(dir: string): { key: string; cert: string } {
  const key = path.join(dir, 'kubelet.key');
  const cert = path.join(dir, 'kubelet.crt');
  if (!existsSync(cert))
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '30',
        '-subj',
        '/CN=127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
  return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
}

/** The downward API's pod fields as plain values (testkit/pod-runner.ts resolves only status.podIP). */
function withFieldValues(pod: V1Pod): V1Pod {
  const fields: Record<string, string | undefined> = {
    'metadata.name': pod.metadata?.name,
    'metadata.namespace': pod.metadata?.namespace,
    'metadata.uid': pod.metadata?.uid,
    'spec.nodeName': pod.spec?.nodeName,
    'spec.serviceAccountName': pod.spec?.serviceAccountName,
  };
  const containers = pod.spec!.containers.map((c) => ({
    ...c,
    env: (c.env ?? []).map((e) => {
      const v = e.valueFrom?.fieldRef ? fields[e.valueFrom.fieldRef.fieldPath] : undefined;
      return v === undefined ? e : { name: e.name, value: v };
    }),
  }));
  return { ...pod, spec: { ...pod.spec!, containers } };
}

/** The `executor` command of Spark's image entrypoint, for a pod Spark made. */
function executorPod(pod: V1Pod, o: NonNullable<KubeletOptions['executor']>): V1Pod {
  const c = pod.spec!.containers[0];
  const env = c.env ?? [];
  const javaOpts = env
    .filter((e) => /^SPARK_JAVA_OPT_\d+$/.test(e.name))
    .sort((a, b) => Number(a.name.slice(15)) - Number(b.name.slice(15)))
    .map((e) => `$(${e.name})`);
  const cp = [`${o.sparkHome}/jars/*`, ...(o.extraClassPath ? [o.extraClassPath] : [])].join(':');
  const command = [
    path.join(process.env.JAVA_HOME ?? '/usr', 'bin/java'),
    // Lighter, as the tests' other Spark JVMs, unless the job chose its own collector or compiler.
    ...(env.some((e) => /^SPARK_JAVA_OPT_\d+$/.test(e.name) && /GC|Tiered/.test(e.value ?? ''))
      ? []
      : TEST_JVM_OPTIONS.split(' ')),
    ...javaOpts,
    '-Xms$(SPARK_EXECUTOR_MEMORY)',
    '-Xmx$(SPARK_EXECUTOR_MEMORY)',
    '-cp',
    cp,
    'org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend',
    '--driver-url',
    '$(SPARK_DRIVER_URL)',
    '--executor-id',
    '$(SPARK_EXECUTOR_ID)',
    '--cores',
    '$(SPARK_EXECUTOR_CORES)',
    '--app-id',
    '$(SPARK_APPLICATION_ID)',
    '--hostname',
    '127.0.0.1',
    '--resourceProfileId',
    '$(SPARK_RESOURCE_PROFILE_ID)',
    '--podName',
    '$(SPARK_EXECUTOR_POD_NAME)',
  ];
  return { ...pod, spec: { ...pod.spec!, containers: [{ ...c, command, args: [] }] } };
}

export async function startKubelet(o: KubeletOptions): Promise<Kubelet> {
  const { cp } = o;
  mkdirSync(o.dir, { recursive: true });
  const caFile = path.join(o.dir, 'ca.crt');
  writeFileSync(caFile, cp.caCert);
  const api = (method: string, p: string, body?: unknown, ct?: string) =>
    kubeRequest(cp, cp.adminToken, method, p, body, ct);
  const running = new Map<string, Running>(); // by pod uid
  const key = (p: V1Pod) => p.metadata!.uid!;

  // The log endpoint the API server proxies pods/log to.
  const server = https.createServer(nodeCert(o.dir), (req, res) => {
    const url = new URL(req.url ?? '/', 'https://127.0.0.1');
    const m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    const entry = m ? [...running.values()].find((r) => r.logFile.endsWith(`/${m[1]}_${m[2]}_${m[3]}.log`)) : undefined;
    if (!m || !entry) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    if (!entry.started) {
      res
        .writeHead(400, { 'content-type': 'text/plain' })
        .end(`container "${m[3]}" in pod "${m[2]}" is waiting to start: ${entry.waiting ?? 'ContainerCreating'}`);
      return;
    }
    let text = existsSync(entry.logFile) ? readFileSync(entry.logFile, 'utf8') : '';
    const tailLines = url.searchParams.get('tailLines');
    if (tailLines !== null) {
      const lines = text.replace(/\n$/, '').split('\n');
      text = lines.slice(-Number(tailLines)).join('\n') + (text ? '\n' : '');
    }
    const limit = url.searchParams.get('limitBytes');
    let buf = Buffer.from(text);
    if (limit !== null) buf = buf.subarray(0, Number(limit));
    res.writeHead(200, { 'content-type': 'text/plain' }).end(buf);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;

  const cap = o.capacity ?? { cpu: 8, memoryMiB: 16 * 1024 };
  const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const node = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: o.nodeName, labels: { 'kubernetes.io/hostname': o.nodeName, 'kubernetes.io/os': 'linux' } },
    spec: {},
  };
  const created = await api('POST', '/api/v1/nodes', node);
  if (created.status !== 201 && created.status !== 409)
    throw new Error(`register node: ${created.status} ${created.text}`);
  const resources = { cpu: String(cap.cpu), memory: `${cap.memoryMiB}Mi`, pods: '110' };
  const nodeStatus = {
    status: {
      capacity: resources,
      allocatable: resources,
      addresses: [
        { type: 'InternalIP', address: '127.0.0.1' },
        { type: 'Hostname', address: o.nodeName },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: port } },
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'KubeletReady',
          message: 'stand-in',
          lastHeartbeatTime: now(),
          lastTransitionTime: now(),
        },
      ],
      nodeInfo: {
        machineID: o.nodeName,
        systemUUID: o.nodeName,
        bootID: o.nodeName,
        kernelVersion: 'test',
        osImage: 'test',
        containerRuntimeVersion: 'local://1',
        kubeletVersion: 'v1.34.3',
        kubeProxyVersion: 'v1.34.3',
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
    },
  };
  const ns = await api('PATCH', `/api/v1/nodes/${o.nodeName}/status`, nodeStatus, 'application/merge-patch+json');
  if (ns.status !== 200) throw new Error(`node status: ${ns.status} ${ns.text}`);

  const patchStatus = (pod: V1Pod, status: Record<string, unknown>) =>
    api(
      'PATCH',
      `/api/v1/namespaces/${pod.metadata!.namespace}/pods/${pod.metadata!.name}/status`,
      { status },
      'application/merge-patch+json',
    );

  const containerName = (pod: V1Pod) => pod.spec!.containers[0].name;

  async function bind(pod: V1Pod, all: V1Pod[]): Promise<void> {
    const used = all
      .filter((p) => p.spec?.nodeName === o.nodeName && !['Succeeded', 'Failed'].includes(p.status?.phase ?? ''))
      .map(requestsOf)
      .reduce((a, b) => ({ cpu: a.cpu + b.cpu, mem: a.mem + b.mem }), { cpu: 0, mem: 0 });
    const want = requestsOf(pod);
    if (used.cpu + want.cpu > cap.cpu || used.mem + want.mem > cap.memoryMiB) {
      const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
      if (scheduled?.status === 'False') return;
      const why = [
        ...(used.cpu + want.cpu > cap.cpu ? ['Insufficient cpu'] : []),
        ...(used.mem + want.mem > cap.memoryMiB ? ['Insufficient memory'] : []),
      ].join(', ');
      await patchStatus(pod, {
        conditions: [
          {
            type: 'PodScheduled',
            status: 'False',
            reason: 'Unschedulable',
            message: `0/1 nodes are available: 1 ${why}.`,
            lastTransitionTime: now(),
          },
        ],
      });
      return;
    }
    const { namespace, name } = pod.metadata!;
    await api('POST', `/api/v1/namespaces/${namespace}/pods/${name}/binding`, {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name },
      target: { apiVersion: 'v1', kind: 'Node', name: o.nodeName },
    });
  }

  async function secretsOf(pod: V1Pod): Promise<V1Secret[] | string> {
    const names = new Set<string>();
    for (const c of pod.spec!.containers)
      for (const e of c.env ?? []) if (e.valueFrom?.secretKeyRef?.name) names.add(e.valueFrom.secretKeyRef.name);
    const out: V1Secret[] = [];
    for (const n of names) {
      const r = await api('GET', `/api/v1/namespaces/${pod.metadata!.namespace}/secrets/${n}`);
      if (r.status !== 200) return `secret "${n}" not found`;
      out.push(r.body as V1Secret);
    }
    return out;
  }

  async function start(pod: V1Pod): Promise<void> {
    const { namespace, name } = pod.metadata!;
    const container = containerName(pod);
    const r: Running = {
      logFile: path.join(o.dir, `${namespace}_${name}_${container}.log`),
      container,
      started: false,
    };
    running.set(key(pod), r);
    const isExecutor = pod.metadata?.labels?.['spark-role'] === 'executor' && o.executor;
    const sa = pod.spec?.serviceAccountName;
    const tokenFile = path.join(o.dir, `${namespace}_${name}.token`);
    const ctx: PodContext = { caFile, apiServer: cp.url, ports: [0, 0] };
    ctx.ports = [await freePort(), await freePort()];
    if (sa && pod.spec?.automountServiceAccountToken !== false) {
      writeFileSync(tokenFile, await serviceAccountToken(cp, namespace!, sa, { name: name!, uid: pod.metadata!.uid! }));
      ctx.tokenFile = tokenFile;
    }
    const plan: PodPlan = isExecutor
      ? { run: { sparkHome: o.executor!.sparkHome, env: o.executor!.env } }
      : await o.plan(pod, ctx);
    const secrets = await secretsOf(pod);
    if (typeof secrets === 'string' || 'waiting' in plan) {
      r.waiting =
        typeof secrets === 'string'
          ? 'CreateContainerConfigError'
          : ('waiting' in plan && plan.waiting) || 'ContainerCreating';
      await patchStatus(pod, {
        phase: 'Pending',
        hostIP: '127.0.0.1',
        containerStatuses: [
          {
            name: container,
            ready: false,
            restartCount: 0,
            image: pod.spec!.containers[0].image,
            imageID: '',
            state: { waiting: { reason: r.waiting, ...(typeof secrets === 'string' ? { message: secrets } : {}) } },
          },
        ],
      });
      if (typeof secrets === 'string') running.delete(key(pod)); // looked at again on the next round
      return;
    }
    const startedAt = now();
    const terminated = (exitCode: number, since: string, why?: string) => {
      const finishedAt = now();
      return {
        phase: exitCode === 0 ? 'Succeeded' : 'Failed',
        conditions: [
          { type: 'Ready', status: 'False', reason: 'PodCompleted', lastTransitionTime: finishedAt },
          { type: 'ContainersReady', status: 'False', reason: 'PodCompleted', lastTransitionTime: finishedAt },
        ],
        containerStatuses: [
          {
            ...runningStatus.containerStatuses[0],
            ready: false,
            started: false,
            state: {
              terminated: {
                exitCode,
                reason: why ?? (exitCode === 0 ? 'Completed' : 'Error'),
                startedAt: since,
                finishedAt,
                containerID: `local://${pod.metadata!.uid}`,
              },
            },
          },
        ],
      };
    };
    // The plan's pod IP (a loopback address of its own stands for the pod's network), else the node's.
    const podIP = ('run' in plan && plan.run.podIP) || '127.0.0.1';
    const runningStatus = {
      phase: 'Running',
      hostIP: '127.0.0.1',
      podIP,
      podIPs: [{ ip: podIP }],
      startTime: startedAt,
      conditions: [
        { type: 'PodScheduled', status: 'True', lastTransitionTime: startedAt },
        { type: 'Initialized', status: 'True', lastTransitionTime: startedAt },
        { type: 'ContainersReady', status: 'True', lastTransitionTime: startedAt },
        { type: 'Ready', status: 'True', lastTransitionTime: startedAt },
      ],
      containerStatuses: [
        {
          name: container,
          ready: true,
          started: true,
          restartCount: 0,
          image: pod.spec!.containers[0].image,
          imageID: `local://${pod.spec!.containers[0].image}`,
          containerID: `local://${pod.metadata!.uid}`,
          state: { running: { startedAt } },
        },
      ],
    };
    if ('hold' in plan) {
      writeFileSync(r.logFile, plan.hold.map((l) => `${l}\n`).join(''));
      r.started = true;
      await patchStatus(pod, runningStatus);
      if (plan.exitAfterMs !== undefined)
        setTimeout(() => {
          if (!running.has(key(pod)) || r.killedByUs) return;
          r.done = true;
          void patchStatus(pod, terminated(plan.exitCode ?? 0, startedAt, plan.reason)).catch(() => undefined);
        }, plan.exitAfterMs);
      return;
    }
    const toRun = withFieldValues(isExecutor ? executorPod(pod, o.executor!) : pod);
    // Each container in a folder of its own, as in its image's file system.
    const cwd = path.join(o.dir, 'pods', `${namespace}_${name}`);
    mkdirSync(cwd, { recursive: true });
    const { child } = startPod(toRun, { cwd, ...plan.run, secrets });
    r.child = child;
    const out = createWriteStream(r.logFile);
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    r.started = true;
    await patchStatus(pod, runningStatus);
    child.on('error', () => undefined);
    child.on('close', (code, signal) => {
      // The container's log is complete on disk before the pod reads as ended, as with a kubelet: a log read
      // right after the end (the adapter saves it on remove) must find the last lines.
      out.end(() => {
        r.done = true;
        if (r.killedByUs) return;
        const exitCode = code ?? (signal === 'SIGKILL' ? 137 : 143);
        void patchStatus(pod, terminated(exitCode, startedAt, signal === 'SIGKILL' ? 'OOMKilled' : undefined)).catch(
          () => undefined,
        );
      });
    });
  }

  async function finishDeletion(pod: V1Pod): Promise<void> {
    const r = running.get(key(pod));
    if (r?.child && !r.done) {
      r.killedByUs = true;
      r.child.kill('SIGTERM');
      const grace = Math.min(pod.metadata?.deletionGracePeriodSeconds ?? 30, 5) * 1000;
      const t0 = Date.now();
      while (!r.done && Date.now() - t0 < grace) await sleep(50);
      if (!r.done) r.child.kill('SIGKILL');
    }
    running.delete(key(pod));
    await api('DELETE', `/api/v1/namespaces/${pod.metadata!.namespace}/pods/${pod.metadata!.name}`, {
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      gracePeriodSeconds: 0,
      preconditions: { uid: pod.metadata!.uid },
    });
  }

  let stopped = false;
  const busy = new Set<string>();
  const once = (p: V1Pod, f: () => Promise<void>) => {
    const k = `${key(p)}`;
    if (busy.has(k)) return;
    busy.add(k);
    f()
      .catch(() => undefined)
      .finally(() => busy.delete(k));
  };
  const loop = (async () => {
    let lastBeat = 0;
    while (!stopped) {
      for (const namespace of o.namespaces) {
        const r = await api('GET', `/api/v1/namespaces/${namespace}/pods`).catch(() => undefined);
        if (r?.status !== 200) continue;
        const pods = (r.body as { items: V1Pod[] }).items;
        for (const p of pods) {
          if (!p.spec?.nodeName) {
            if (!p.metadata?.deletionTimestamp) once(p, () => bind(p, pods));
          } else if (p.spec.nodeName !== o.nodeName) continue;
          else if (p.metadata?.deletionTimestamp) once(p, () => finishDeletion(p));
          else if (!running.has(key(p)) && !['Succeeded', 'Failed'].includes(p.status?.phase ?? ''))
            once(p, () => start(p));
        }
      }
      if (Date.now() - lastBeat > 10_000) {
        lastBeat = Date.now();
        nodeStatus.status.conditions[0].lastHeartbeatTime = now();
        await api('PATCH', `/api/v1/nodes/${o.nodeName}/status`, nodeStatus, 'application/merge-patch+json').catch(
          () => undefined,
        );
      }
      await sleep(o.intervalMs ?? 200);
    }
  })();

  return {
    nodeName: o.nodeName,
    port,
    logOf(namespace, pod) {
      const r = [...running.values()].find((x) => path.basename(x.logFile).startsWith(`${namespace}_${pod}_`));
      return r && existsSync(r.logFile) && statSync(r.logFile).isFile() ? r.logFile : undefined;
    },
    async stop() {
      stopped = true;
      await loop;
      for (const r of running.values()) if (r.child && !r.done) r.child.kill('SIGKILL');
      // The API server keeps its connections to the node for 90 s when idle.
      const closed = new Promise<void>((res) => server.close(() => res()));
      server.closeAllConnections();
      await closed;
      await api('DELETE', `/api/v1/nodes/${o.nodeName}`).catch(() => undefined);
    },
  };
}
