// The k8s path is proven against a real kube-apiserver (testkit/kube: k8s-real-apiserver,
// k8s-real-cluster-rules, k8s-client-cert, k8s-cluster-settings, k8s-sql-engine, conformance-namespace,
// broken-groups, broken-k8s-jobs, k8s-adapter, k8s-and-streams, k8s-s3a, e2e/k8s-pyspark). This fake stays only for faults
// injected on demand that a real server with the kubelet stand-in cannot be made to produce, and for load:
// - 5xx answers for a while, and API servers that hang or drop connections mid-call (broken-k8s-jobs,
//   parts of k8s-adapter);
// - image pulls that fail (ErrImagePull, ImagePullBackOff, InvalidImageName, ErrImageNeverPull,
//   CreateContainerConfigError): there is no container runtime here (k8s-real-cluster-rules' image tests,
//   k8s-adapter's status rules for them);
// - credentials a real API server no longer takes (basic auth: kube-apiserver removed it in 1.19), and a
//   record of exactly what was sent (k8s-adapter's basic-auth test, and its check that a refused spec makes
//   no request; its launch tests run on the real server). Client certificates run on the real server, whose
//   client CA testkit/kube/control-plane.ts's issueClientCert signs with (k8s-client-cert);
// - thousands of pods in-process for the soak (bench/soak.ts) and `BENCH_K8S=fake npm run bench:k8s`.
// A test of behaviour a real server can produce belongs on testkit/kube, not here.
//
// An in-process fake of the Kubernetes API server: the part of the core/v1 REST API the k8s adapter
// uses (pods, services, secrets, pod logs), answering with real Kubernetes Status objects. Every
// created manifest is checked against the official schema (kubernetes-models) plus the name and
// label rules the real API server enforces, so an adapter that passes here sends valid objects.
// Pods "play" their phases on timers: Pending → Running → Succeeded, or whatever a test sets. Like a
// real cluster it can refuse by RBAC (403 with the API server's words), leave a pod unschedulable when
// it asks for more than the node has (PodScheduled=False, Unschedulable), fail to pull an image
// (ErrImagePull, then ImagePullBackOff; InvalidImageName for a malformed reference), and page logs
// with tailLines and limitBytes. With a `kubelet`, a pod's container runs for real as a local process
// (testkit/pod-runner.ts): Running when it starts, Succeeded or Failed with its exit code, its output as
// the pod's log, killed when the pod is deleted.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pod } from 'kubernetes-models/v1/Pod';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { startPod, type PodRunOptions } from './pod-runner';

export type FakePodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

/** A stored object: plain JSON as the API server would return it. */
export type KObject = Record<string, any> & { metadata: Record<string, any> };

export interface FakeK8sPhaseControls {
  /** Time a new pod stays Pending before Running. Default 50 ms. */
  pendingMs?: number;
  /**
   * Time a pod runs before it Succeeds (exit code 0); null keeps it Running until setPhase.
   * A function decides per pod. Default 250 ms.
   */
  runMs?: number | null | ((pod: KObject) => number | null);
}

export interface FakeK8sOptions {
  /** Default 0: a free port. */
  port?: number;
  phases?: FakeK8sPhaseControls;
  /** Log lines of a pod no test has set logs for. Default: a few lines naming the pod. */
  defaultLog?: (pod: KObject) => string[];
  /** Requires HTTP basic auth with these credentials (401 otherwise). */
  basicAuth?: { username: string; password: string };
  /** Requires `Authorization: Bearer <token>` (401 otherwise). */
  bearerToken?: string;
  /** What one node can give pods; a pod whose requests exceed it stays Pending, unschedulable. Default: unbounded. */
  nodeAllocatable?: { cpu: number; memoryMiB: number };
  /** Images that cannot be pulled (the registry does not have them): ErrImagePull, then ImagePullBackOff. */
  missingImages?: (image: string) => boolean;
  /**
   * A local kubelet: how to run a pod's first container as a local process (secrets come from the fake's
   * own), or undefined to play the pod's phases on timers as usual.
   */
  kubelet?: (pod: KObject) => Omit<PodRunOptions, 'secrets'> | undefined;
  /** How many recent requests `requests` keeps. Default 10000. */
  maxRecordedRequests?: number;
}

export interface SetPhaseOptions {
  /** Terminated containers: exit code (default 0 for Succeeded, 1 for Failed). */
  exitCode?: number;
  /** Terminated reason (default Completed / Error), or the waiting reason for Pending (e.g. ImagePullBackOff). */
  reason?: string;
  message?: string;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  authorization?: string;
  body?: unknown;
  status: number;
}

type Kind = 'pods' | 'services' | 'secrets' | 'networkpolicies';

export interface FakeK8sState {
  /** Objects by `namespace/name`. */
  pods: Map<string, KObject>;
  services: Map<string, KObject>;
  secrets: Map<string, KObject>;
  /** networking.k8s.io/v1, under /apis/networking.k8s.io/v1. */
  networkpolicies: Map<string, KObject>;
  /** Log lines by `namespace/name` of the pod, where a test set them. */
  logs: Map<string, string[]>;
}

export interface FakeK8s {
  /** Base URL of the API server (http://127.0.0.1:port). */
  url: string;
  state: FakeK8sState;
  /** Recent requests, oldest first (bounded by maxRecordedRequests). */
  requests: RecordedRequest[];
  /** Moves a pod to a phase now, cancelling its scheduled transitions. Throws if there is no such pod. */
  setPhase(namespace: string, pod: string, phase: FakePodPhase, opts?: SetPhaseOptions): void;
  setLogs(namespace: string, pod: string, lines: string[] | string): void;
  /** Creates a pod as another client would (e.g. Spark creating an executor); validated like any create. */
  addPod(namespace: string, manifest: object): KObject;
  /** While set, every request is answered with this 5xx status (e.g. 503); false restores service. */
  setUnavailable(code: number | false): void;
  /**
   * Refuses a verb (create, get, list, delete, deletecollection) on a resource (pods, pods/log, services,
   * secrets) with 403 Forbidden, as RBAC does, naming `user`; `allow` lifts it.
   */
  forbid(resource: string, verb: string, user?: string): void;
  allow(resource: string, verb: string): void;
  stop(): Promise<void>;
}

const KIND: Record<
  Kind,
  { kind: string; list: string; model: new (d: never) => { validate(): void }; apiVersion: string }
> = {
  pods: { kind: 'Pod', list: 'PodList', model: Pod as never, apiVersion: 'v1' },
  services: { kind: 'Service', list: 'ServiceList', model: Service as never, apiVersion: 'v1' },
  secrets: { kind: 'Secret', list: 'SecretList', model: Secret as never, apiVersion: 'v1' },
  networkpolicies: {
    kind: 'NetworkPolicy',
    list: 'NetworkPolicyList',
    model: NetworkPolicy as never,
    apiVersion: 'networking.k8s.io/v1',
  },
};

/**
 * /apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies/... as /api/v1/namespaces/{ns}/networkpolicies/...
 * (so one router serves both groups); anything else as it is, and networkpolicies under /api/v1 not at all.
 */
function normalisePath(parts: string[]): string[] {
  if (parts[0] === 'apis' && parts[1] === 'networking.k8s.io' && parts[2] === 'v1' && parts[5] === 'networkpolicies')
    return ['api', 'v1', ...parts.slice(3)];
  if (parts[0] === 'api' && parts[4] === 'networkpolicies') return ['api', 'v1', 'namespaces', '', 'none'];
  return parts;
}

// The API server's name and label rules (k8s.io/apimachinery/pkg/util/validation).
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;
const PORT_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

interface Cause {
  field: string;
  message: string;
}

function checkQualifiedKey(field: string, key: string, causes: Cause[]) {
  const [prefix, name] = key.includes('/')
    ? [key.slice(0, key.indexOf('/')), key.slice(key.indexOf('/') + 1)]
    : [undefined, key];
  if (prefix !== undefined && (prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix)))
    causes.push({ field, message: `prefix of '${key}' must be a DNS-1123 subdomain` });
  if (!name || name.length > 63 || !QUALIFIED_NAME.test(name))
    causes.push({
      field,
      message: `name part of '${key}' must be ≤ 63 alphanumerics, '-', '_' or '.', alphanumeric at both ends`,
    });
}

function checkLabels(field: string, labels: Record<string, unknown> | undefined, causes: Cause[]) {
  for (const [k, v] of Object.entries(labels ?? {})) {
    checkQualifiedKey(`${field}[${k}]`, k, causes);
    if (typeof v !== 'string' || v.length > 63 || !LABEL_VALUE.test(v))
      causes.push({ field: `${field}[${k}]`, message: `invalid label value '${String(v)}'` });
  }
}

/** What the real API server checks beyond the OpenAPI schema, for the fields the adapter sets. */
function semanticCauses(kind: Kind, o: KObject): Cause[] {
  const causes: Cause[] = [];
  const name = o.metadata?.name;
  if (typeof name !== 'string' || !name)
    causes.push({ field: 'metadata.name', message: 'name or generateName is required' });
  else if (
    kind === 'services'
      ? name.length > 63 || !DNS1035_LABEL.test(name)
      : name.length > 253 || !DNS1123_SUBDOMAIN.test(name)
  ) {
    causes.push({
      field: 'metadata.name',
      message: `'${name}' must be a ${kind === 'services' ? 'DNS-1035 label' : 'DNS-1123 subdomain'}`,
    });
  }
  checkLabels('metadata.labels', o.metadata?.labels, causes);
  for (const k of Object.keys(o.metadata?.annotations ?? {}))
    checkQualifiedKey(`metadata.annotations[${k}]`, k, causes);
  if (kind === 'pods') {
    const containers = (o.spec?.containers ?? []) as Record<string, any>[];
    if (containers.length === 0) causes.push({ field: 'spec.containers', message: 'Required value' });
    if (o.spec?.restartPolicy && !['Always', 'OnFailure', 'Never'].includes(o.spec.restartPolicy)) {
      causes.push({ field: 'spec.restartPolicy', message: `Unsupported value: "${o.spec.restartPolicy}"` });
    }
    containers.forEach((c, i) => {
      const f = `spec.containers[${i}]`;
      if (!c.name || !DNS1123_LABEL.test(c.name) || c.name.length > 63)
        causes.push({ field: `${f}.name`, message: `invalid container name '${c.name}'` });
      if (!c.image) causes.push({ field: `${f}.image`, message: 'Required value' });
      for (const [j, e] of ((c.env ?? []) as Record<string, any>[]).entries()) {
        if (!ENV_NAME.test(e.name ?? ''))
          causes.push({ field: `${f}.env[${j}].name`, message: `invalid environment variable name '${e.name}'` });
        if (e.value !== undefined && e.valueFrom !== undefined)
          causes.push({ field: `${f}.env[${j}].valueFrom`, message: 'may not be specified when `value` is not empty' });
      }
      for (const [j, p] of ((c.ports ?? []) as Record<string, any>[]).entries()) {
        if (p.name !== undefined && (p.name.length > 15 || !PORT_NAME.test(p.name) || !/[a-z]/.test(p.name)))
          causes.push({ field: `${f}.ports[${j}].name`, message: `invalid port name '${p.name}'` });
      }
    });
  }
  if (kind === 'services') {
    checkLabels('spec.selector', o.spec?.selector, causes);
    const ports = (o.spec?.ports ?? []) as Record<string, any>[];
    if (ports.length > 1 && ports.some((p) => !p.name))
      causes.push({ field: 'spec.ports', message: 'every port of a multi-port service needs a name' });
    for (const [j, p] of ports.entries()) {
      if (p.name !== undefined && (p.name.length > 63 || !DNS1123_LABEL.test(p.name)))
        causes.push({ field: `spec.ports[${j}].name`, message: `invalid port name '${p.name}'` });
    }
  }
  if (kind === 'secrets') {
    for (const k of [...Object.keys(o.data ?? {}), ...Object.keys(o.stringData ?? {})]) {
      if (!SECRET_KEY.test(k)) causes.push({ field: `data[${k}]`, message: `invalid key '${k}'` });
    }
  }
  return causes;
}

/** `a=b,c!=d,e,!f`: the equality-based selector syntax (set-based `in (...)` is refused). */
function parseSelector(s: string): ((labels: Record<string, string>) => boolean) | string {
  const tests: ((l: Record<string, string>) => boolean)[] = [];
  for (const raw of s.split(',')) {
    const term = raw.trim();
    if (!term) continue;
    let m: RegExpExecArray | null;
    if ((m = /^([^!=\s]+)\s*!=\s*(\S*)$/.exec(term))) {
      const [, k, v] = m;
      tests.push((l) => l[k] !== v);
    } else if ((m = /^([^!=\s]+)\s*==?\s*(\S*)$/.exec(term))) {
      const [, k, v] = m;
      tests.push((l) => l[k] === v);
    } else if ((m = /^!\s*([^!=\s]+)$/.exec(term))) {
      const k = m[1];
      tests.push((l) => !(k in l));
    } else if (/^[^!=\s(),]+$/.test(term)) {
      tests.push((l) => term in l);
    } else {
      return `unable to parse requirement: '${term}' (the fake supports =, ==, != and existence)`;
    }
  }
  return (labels) => tests.every((t) => t(labels));
}

/** An image reference the kubelet can parse: lower-case repository, optional tag or digest. */
const IMAGE_REF =
  /^(?:[a-zA-Z0-9.-]+(?::\d+)?\/)?[a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*(?::[\w][\w.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$/;

/** Kubernetes CPU quantity (`2`, `500m`) in cores. */
const cpuOf = (q: unknown): number => {
  const s = String(q ?? '0');
  return s.endsWith('m') ? Number(s.slice(0, -1)) / 1000 : Number(s);
};
/** Kubernetes memory quantity (`2432Mi`, `2Gi`, `1G`, bytes) in MiB. */
const memMiBOf = (q: unknown): number => {
  const m = /^(\d+(?:\.\d+)?)([KMGT]i?)?$/.exec(String(q ?? '0'));
  if (!m) return 0;
  const bin: Record<string, number> = { Ki: 1 / 1024, Mi: 1, Gi: 1024, Ti: 1024 ** 2 };
  const dec: Record<string, number> = { K: 1e3, M: 1e6, G: 1e9, T: 1e12 };
  const unit = m[2] ?? '';
  return unit in bin ? Number(m[1]) * bin[unit] : (Number(m[1]) * (dec[unit] ?? 1)) / 1024 ** 2;
};

const rfc3339 = (t = Date.now()) => new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z');

export async function startFakeK8s(opts: FakeK8sOptions = {}): Promise<FakeK8s> {
  const pendingMs = opts.phases?.pendingMs ?? 50;
  const runMsOf = (pod: KObject): number | null => {
    const r = opts.phases?.runMs === undefined ? 250 : opts.phases.runMs;
    return typeof r === 'function' ? r(pod) : r;
  };
  const maxRecorded = opts.maxRecordedRequests ?? 10_000;
  const state: FakeK8sState = {
    pods: new Map(),
    services: new Map(),
    secrets: new Map(),
    networkpolicies: new Map(),
    logs: new Map(),
  };
  const requests: RecordedRequest[] = [];
  const timers = new Map<string, NodeJS.Timeout[]>();
  let resourceVersion = 1000;
  let podIp = 0;
  let unavailable: number | false = false;

  const clearTimers = (key: string) => {
    for (const t of timers.get(key) ?? []) clearTimeout(t);
    timers.delete(key);
  };
  const schedule = (key: string, ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.set(
        key,
        (timers.get(key) ?? []).filter((x) => x !== t),
      );
      fn();
    }, ms);
    timers.set(key, [...(timers.get(key) ?? []), t]);
  };

  const containerStatus = (c: Record<string, any>, st: Record<string, unknown>, ready: boolean, podUid: string) => ({
    name: c.name,
    image: c.image,
    imageID: `docker-pullable://${c.image}@sha256:${'0'.repeat(64)}`,
    containerID: `containerd://${podUid.replace(/-/g, '')}`,
    ready,
    started: 'running' in st,
    restartCount: 0,
    state: st,
    lastState: {},
  });

  /** Sets phase and container states the way the kubelet reports them. */
  const applyPhase = (pod: KObject, phase: FakePodPhase, o: SetPhaseOptions = {}) => {
    const now = rfc3339();
    const containers = (pod.spec?.containers ?? []) as Record<string, any>[];
    const prevStart =
      pod.status?.containerStatuses?.[0]?.state?.running?.startedAt ??
      pod.status?.containerStatuses?.[0]?.state?.terminated?.startedAt;
    const uid = pod.metadata.uid as string;
    let st: Record<string, unknown>;
    if (phase === 'Pending')
      st = { waiting: { reason: o.reason ?? 'ContainerCreating', ...(o.message ? { message: o.message } : {}) } };
    else if (phase === 'Running') st = { running: { startedAt: now } };
    else if (phase === 'Succeeded' || phase === 'Failed') {
      const exitCode = o.exitCode ?? (phase === 'Succeeded' ? 0 : 1);
      st = {
        terminated: {
          exitCode,
          reason: o.reason ?? (phase === 'Succeeded' ? 'Completed' : 'Error'),
          ...(o.message ? { message: o.message } : {}),
          startedAt: prevStart ?? now,
          finishedAt: now,
          containerID: `containerd://${uid.replace(/-/g, '')}`,
        },
      };
    } else st = {};
    const ready = phase === 'Running';
    pod.status = {
      ...pod.status,
      phase,
      conditions: [
        {
          type: 'PodScheduled',
          status: 'True',
          lastTransitionTime: pod.status?.conditions?.[0]?.lastTransitionTime ?? now,
        },
        {
          type: 'Ready',
          status: ready ? 'True' : 'False',
          lastTransitionTime: now,
          ...(ready ? {} : { reason: phase === 'Pending' ? 'ContainersNotReady' : 'PodCompleted' }),
        },
      ],
      containerStatuses: containers.map((c) => containerStatus(c, st, ready, uid)),
    };
    pod.metadata.resourceVersion = String(++resourceVersion);
  };

  /** The scheduler's words for a pod no node can take, or undefined. */
  const unschedulable = (pod: KObject): string | undefined => {
    const node = opts.nodeAllocatable;
    if (!node) return undefined;
    const req = ((pod.spec?.containers ?? []) as Record<string, any>[]).reduce(
      (sum, c) => ({
        cpu: sum.cpu + cpuOf(c.resources?.requests?.cpu),
        mem: sum.mem + memMiBOf(c.resources?.requests?.memory),
      }),
      { cpu: 0, mem: 0 },
    );
    const short = [
      req.cpu > node.cpu ? '1 Insufficient cpu' : '',
      req.mem > node.memoryMiB ? '1 Insufficient memory' : '',
    ]
      .filter(Boolean)
      .join(', ');
    return short
      ? `0/1 nodes are available: ${short}. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.`
      : undefined;
  };
  const setUnschedulable = (pod: KObject, message: string) => {
    pod.status = {
      phase: 'Pending',
      qosClass: pod.status?.qosClass,
      conditions: [
        { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message, lastTransitionTime: rfc3339() },
      ],
    };
    delete pod.spec.nodeName;
    pod.metadata.resourceVersion = String(++resourceVersion);
  };
  /** InvalidImageName for a reference the kubelet cannot parse; ErrImagePull for one the registry lacks. */
  const imageProblem = (pod: KObject): 'InvalidImageName' | 'ErrImagePull' | undefined => {
    const images = ((pod.spec?.containers ?? []) as Record<string, any>[]).map((c) => String(c.image ?? ''));
    if (images.some((i) => !IMAGE_REF.test(i))) return 'InvalidImageName';
    if (images.some((i) => opts.missingImages?.(i))) return 'ErrImagePull';
    return undefined;
  };
  const pullFails = (key: string, pod: KObject, reason: 'InvalidImageName' | 'ErrImagePull') => {
    const image = String(pod.spec.containers[0].image);
    if (reason === 'InvalidImageName') {
      const message = `Failed to apply default image tag "${image}": couldn't parse image name "${image}": invalid reference format`;
      applyPhase(pod, 'Pending', { reason, message });
      return;
    }
    applyPhase(pod, 'Pending', {
      reason,
      message: `failed to pull and unpack image "${image}": failed to resolve reference "${image}": not found`,
    });
    schedule(key, pendingMs, () =>
      applyPhase(pod, 'Pending', { reason: 'ImagePullBackOff', message: `Back-off pulling image "${image}"` }),
    );
  };

  const processes = new Map<string, ChildProcess>();
  /** The kubelet: runs the pod's command once its pending time is over; false when the kubelet declines. */
  const runLocally = (key: string, pod: KObject): boolean => {
    const how = opts.kubelet?.(pod);
    if (!how) return false;
    schedule(key, pendingMs, () => {
      if (!state.pods.has(key)) return;
      const ns = pod.metadata.namespace as string;
      const secrets = [...state.secrets.entries()].filter(([k]) => k.startsWith(`${ns}/`)).map(([, x]) => x);
      let child: ReturnType<typeof startPod>['child'];
      try {
        child = startPod(pod as never, { ...how, secrets: secrets as never }).child;
      } catch (e) {
        // As a kubelet does: a secret the pod refers to that does not exist yet is waited for.
        if (/refers to secret/.test((e as Error).message)) {
          applyPhase(pod, 'Pending', { reason: 'CreateContainerConfigError', message: (e as Error).message });
          runLocally(key, pod);
          return;
        }
        applyPhase(pod, 'Failed', { exitCode: 128, reason: 'StartError', message: (e as Error).message });
        return;
      }
      processes.set(key, child);
      applyPhase(pod, 'Running');
      const lines: string[] = [];
      state.logs.set(key, lines);
      const collect = (stream: NodeJS.ReadableStream) => {
        let partial = '';
        stream.on('data', (d: Buffer) => {
          const parts = (partial + d.toString()).split('\n');
          partial = parts.pop()!;
          lines.push(...parts);
        });
        stream.on('end', () => partial && lines.push(partial));
      };
      collect(child.stdout);
      collect(child.stderr);
      child.on('close', (code, signal) => {
        processes.delete(key);
        if (state.pods.get(key) !== pod) return;
        const exitCode = code ?? 137;
        const reason = exitCode === 0 ? 'Completed' : signal ? 'Killed' : 'Error';
        applyPhase(pod, exitCode === 0 ? 'Succeeded' : 'Failed', { exitCode, reason });
      });
    });
    return true;
  };
  const kill = (key: string) => {
    const child = processes.get(key);
    if (!child) return;
    child.kill('SIGTERM');
    setTimeout(() => child.exitCode === null && child.kill('SIGKILL'), 3000).unref();
  };

  const play = (key: string, pod: KObject) => {
    schedule(key, pendingMs, () => {
      applyPhase(pod, 'Running');
      const runMs = runMsOf(pod);
      if (runMs !== null) schedule(key, runMs, () => applyPhase(pod, 'Succeeded'));
    });
  };

  const status = (code: number, reason: string, message: string, details?: Record<string, unknown>) => ({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: code < 400 ? 'Success' : 'Failure',
    message,
    reason,
    ...(details ? { details } : {}),
    code,
  });

  class HttpError extends Error {
    constructor(
      readonly code: number,
      readonly body: object,
    ) {
      super(String((body as { message?: string }).message));
    }
  }
  const notFound = (kind: Kind, name: string) =>
    new HttpError(404, status(404, 'NotFound', `${kind} "${name}" not found`, { name, kind }));

  /** Stores a new object after the API server's checks; returns it as the server would. */
  const create = (kind: Kind, namespace: string, body: unknown): KObject => {
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new HttpError(400, status(400, 'BadRequest', 'the body must be a JSON object'));
    const o = structuredClone(body) as KObject;
    const { kind: k, model, apiVersion } = KIND[kind];
    if (o.kind !== undefined && o.kind !== k)
      throw new HttpError(400, status(400, 'BadRequest', `kind ${o.kind} does not match the ${kind} endpoint`));
    if (o.apiVersion !== undefined && o.apiVersion !== apiVersion)
      throw new HttpError(400, status(400, 'BadRequest', `apiVersion ${o.apiVersion} does not match ${apiVersion}`));
    o.apiVersion = apiVersion;
    o.kind = k;
    o.metadata ??= {};
    if (o.metadata.namespace !== undefined && o.metadata.namespace !== namespace) {
      throw new HttpError(
        400,
        status(
          400,
          'BadRequest',
          'the namespace of the provided object does not match the namespace sent on the request',
        ),
      );
    }
    o.metadata.namespace = namespace;
    const causes: Cause[] = [];
    try {
      new model(o as never).validate();
    } catch (e) {
      causes.push({ field: '(schema)', message: (e as Error).message });
    }
    causes.push(...semanticCauses(kind, o));
    const name = String(o.metadata.name ?? '');
    if (causes.length) {
      throw new HttpError(
        422,
        status(
          422,
          'Invalid',
          `${k} "${name}" is invalid: ${causes.map((c) => `${c.field}: ${c.message}`).join(', ')}`,
          {
            name,
            kind,
            causes: causes.map((c) => ({ reason: 'FieldValueInvalid', message: c.message, field: c.field })),
          },
        ),
      );
    }
    const key = `${namespace}/${name}`;
    if (state[kind].has(key))
      throw new HttpError(409, status(409, 'AlreadyExists', `${kind} "${name}" already exists`, { name, kind }));
    o.metadata.uid = randomUUID();
    o.metadata.resourceVersion = String(++resourceVersion);
    o.metadata.creationTimestamp = rfc3339();
    if (kind === 'secrets') {
      // Like the API server: stringData is write-only and lands base64-encoded in data.
      o.type ??= 'Opaque';
      o.data = { ...(o.data ?? {}) };
      for (const [dk, v] of Object.entries((o.stringData ?? {}) as Record<string, string>))
        o.data[dk] = Buffer.from(v).toString('base64');
      delete o.stringData;
    }
    if (kind === 'services') {
      o.spec ??= {};
      o.spec.type ??= 'ClusterIP';
      o.spec.clusterIP ??= `10.96.${(resourceVersion >> 8) & 255}.${resourceVersion & 255}`;
      o.status = { loadBalancer: {} };
    }
    if (kind === 'pods') {
      o.spec.nodeName = 'fake-node';
      podIp++;
      o.status = {
        hostIP: '10.0.0.1',
        podIP: `10.244.${(podIp >> 8) & 255}.${podIp & 255}`,
        startTime: rfc3339(),
        qosClass: 'Burstable',
      };
      applyPhase(o, 'Pending');
      state.pods.set(key, o);
      const why = unschedulable(o);
      const badImage = imageProblem(o);
      if (why) setUnschedulable(o, why);
      else if (badImage) pullFails(key, o, badImage);
      else if (!runLocally(key, o)) play(key, o);
    } else {
      state[kind].set(key, o);
    }
    return o;
  };

  const remove = (kind: Kind, key: string) => {
    const o = state[kind].get(key);
    state[kind].delete(key);
    if (kind === 'pods') {
      clearTimers(key);
      state.logs.delete(key);
      kill(key);
    }
    return o;
  };

  const logLines = (key: string, pod: KObject) => state.logs.get(key) ?? (opts.defaultLog ?? defaultLog)(pod);

  const route = (
    method: string,
    parts: string[],
    query: URLSearchParams,
    body: unknown,
  ): { code: number; body: unknown; text?: boolean } => {
    if (parts[0] === 'version' && parts.length === 1 && method === 'GET') {
      return { code: 200, body: { major: '1', minor: '33', gitVersion: 'v1.33.0-fake', platform: 'linux/amd64' } };
    }
    // /api/v1/namespaces/{ns}/{kind}[/{name}[/log]]
    if (
      parts[0] !== 'api' ||
      parts[1] !== 'v1' ||
      parts[2] !== 'namespaces' ||
      !parts[3] ||
      !(parts[4] in KIND) ||
      parts.length > 7
    ) {
      throw new HttpError(404, status(404, 'NotFound', 'the server could not find the requested resource'));
    }
    const ns = parts[3];
    const kind = parts[4] as Kind;
    const name = parts[5];
    const sub = parts[6];
    const selector = () => {
      const p = parseSelector(query.get('labelSelector') ?? '');
      if (typeof p === 'string') throw new HttpError(400, status(400, 'BadRequest', p));
      return p;
    };
    const inNs = () => [...state[kind].entries()].filter(([k]) => k.startsWith(`${ns}/`));
    if (name === undefined) {
      if (method === 'GET') {
        const match = selector();
        const items = inNs()
          .map(([, o]) => o)
          .filter((o) => match(o.metadata.labels ?? {}));
        return {
          code: 200,
          body: {
            kind: KIND[kind].list,
            apiVersion: KIND[kind].apiVersion,
            metadata: { resourceVersion: String(resourceVersion) },
            items,
          },
        };
      }
      if (method === 'POST') return { code: 201, body: create(kind, ns, body) };
      if (method === 'DELETE') {
        const match = selector();
        const items = inNs()
          .filter(([, o]) => match(o.metadata.labels ?? {}))
          .map(([k]) => remove(kind, k));
        return {
          code: 200,
          body: {
            kind: KIND[kind].list,
            apiVersion: KIND[kind].apiVersion,
            metadata: { resourceVersion: String(resourceVersion) },
            items,
          },
        };
      }
      throw new HttpError(
        405,
        status(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`),
      );
    }
    const key = `${ns}/${name}`;
    if (sub !== undefined) {
      if (kind !== 'pods' || sub !== 'log' || method !== 'GET')
        throw new HttpError(404, status(404, 'NotFound', 'the server could not find the requested resource'));
      const pod = state.pods.get(key);
      if (!pod) throw notFound(kind, name);
      const containers = (pod.spec?.containers ?? []) as { name: string }[];
      const container = query.get('container') ?? undefined;
      if (container === undefined && containers.length > 1) {
        throw new HttpError(
          400,
          status(
            400,
            'BadRequest',
            `a container name must be specified for pod ${name}, choose one of: [${containers.map((c) => c.name).join(' ')}]`,
          ),
        );
      }
      if (container !== undefined && !containers.some((c) => c.name === container)) {
        throw new HttpError(400, status(400, 'BadRequest', `container ${container} is not valid for pod ${name}`));
      }
      if (pod.status?.phase === 'Pending') {
        const reason = pod.status.containerStatuses?.[0]?.state?.waiting?.reason ?? 'ContainerCreating';
        throw new HttpError(
          400,
          status(
            400,
            'BadRequest',
            `container "${container ?? containers[0]?.name}" in pod "${name}" is waiting to start: ${reason}`,
          ),
        );
      }
      let lines = logLines(key, pod);
      const tail = query.get('tailLines');
      if (tail !== null) lines = Number(tail) > 0 ? lines.slice(-Number(tail)) : [];
      let text = lines.length ? `${lines.join('\n')}\n` : '';
      const limit = query.get('limitBytes');
      if (limit !== null) text = Buffer.from(text).subarray(0, Number(limit)).toString('utf8');
      return { code: 200, body: text, text: true };
    }
    const o = state[kind].get(key);
    if (!o) throw notFound(kind, name);
    if (method === 'GET') return { code: 200, body: o };
    if (method === 'DELETE') {
      remove(kind, key);
      if (kind === 'secrets') return { code: 200, body: status(200, '', '', { name, kind, uid: o.metadata.uid }) };
      return { code: 200, body: o };
    }
    throw new HttpError(
      405,
      status(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource'),
    );
  };

  const record = (r: RecordedRequest) => {
    requests.push(r);
    if (requests.length > maxRecorded) requests.splice(0, requests.length - maxRecorded);
  };

  const expectedAuth = opts.basicAuth
    ? `Basic ${Buffer.from(`${opts.basicAuth.username}:${opts.basicAuth.password}`).toString('base64')}`
    : opts.bearerToken
      ? `Bearer ${opts.bearerToken}`
      : undefined;

  /** Denied `resource verb` pairs and the user each names. */
  const denied = new Map<string, string>();
  /** RBAC's verdict on /api/v1/namespaces/{ns}/{kind}[/{name}[/{sub}]], in the API server's words. */
  const checkRbac = (method: string, parts: string[]) => {
    if (parts[0] !== 'api' || parts[2] !== 'namespaces' || !parts[4]) return;
    const [ns, kind, name, sub] = [parts[3], parts[4], parts[5], parts[6]];
    const resource = sub ? `${kind}/${sub}` : kind;
    const verb =
      method === 'POST'
        ? 'create'
        : method === 'DELETE'
          ? name
            ? 'delete'
            : 'deletecollection'
          : name
            ? 'get'
            : 'list';
    const user = denied.get(`${resource} ${verb}`);
    if (user === undefined) return;
    const [res, subres] = resource.split('/');
    const what = subres ? `${res}/${subres}` : res;
    throw new HttpError(
      403,
      status(
        403,
        'Forbidden',
        `${what}${name && verb !== 'create' ? ` "${name}"` : ''} is forbidden: User "${user}" cannot ${verb} resource "${res}"${subres ? `/${subres}` : ''} in API group "" in the namespace "${ns}"`,
        { ...(name ? { name } : {}), kind: res },
      ),
    );
  };

  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      let code = 500;
      let out: unknown;
      let text = false;
      try {
        if (raw) {
          try {
            body = JSON.parse(raw);
          } catch {
            throw new HttpError(400, status(400, 'BadRequest', 'the request body is not JSON'));
          }
        }
        if (unavailable)
          throw new HttpError(
            unavailable,
            status(unavailable, 'ServiceUnavailable', 'the fake API server is set unavailable'),
          );
        if (expectedAuth && req.headers.authorization !== expectedAuth)
          throw new HttpError(401, status(401, 'Unauthorized', 'Unauthorized'));
        const parts = normalisePath(url.pathname.split('/').filter(Boolean).map(decodeURIComponent));
        checkRbac(req.method ?? 'GET', parts);
        const r = route(req.method ?? 'GET', parts, url.searchParams, body);
        code = r.code;
        out = r.body;
        text = !!r.text;
      } catch (e) {
        if (e instanceof HttpError) {
          code = e.code;
          out = e.body;
        } else {
          code = 500;
          out = status(500, 'InternalError', `fake-k8s: ${(e as Error).message}`);
        }
      }
      record({
        method: req.method ?? 'GET',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        authorization: req.headers.authorization,
        body,
        status: code,
      });
      const payload = text ? String(out) : JSON.stringify(out);
      res.writeHead(code, {
        'Content-Type': text ? 'text/plain; charset=utf-8' : 'application/json',
        'Content-Length': Buffer.byteLength(payload),
      });
      res.end(payload);
    });
  };

  const server = http.createServer(handler);
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  const podOf = (namespace: string, name: string) => {
    const pod = state.pods.get(`${namespace}/${name}`);
    if (!pod) throw new Error(`fake-k8s: no pod ${namespace}/${name}`);
    return pod;
  };

  return {
    url: `http://127.0.0.1:${port}`,
    state,
    requests,
    setPhase(namespace, name, phase, o) {
      const key = `${namespace}/${name}`;
      const pod = podOf(namespace, name);
      clearTimers(key);
      applyPhase(pod, phase, o);
    },
    setLogs(namespace, name, lines) {
      podOf(namespace, name);
      state.logs.set(
        `${namespace}/${name}`,
        typeof lines === 'string' ? lines.replace(/\n$/, '').split('\n') : [...lines],
      );
    },
    addPod(namespace, manifest) {
      try {
        return create('pods', namespace, manifest);
      } catch (e) {
        throw new Error(`fake-k8s: ${(e as Error).message}`);
      }
    },
    setUnavailable(code) {
      unavailable = code;
    },
    forbid(resource, verb, user = 'system:serviceaccount:spark-orchestrator:spark-orchestrator') {
      denied.set(`${resource} ${verb}`, user);
    },
    allow(resource, verb) {
      denied.delete(`${resource} ${verb}`);
    },
    async stop() {
      for (const key of [...timers.keys()]) clearTimers(key);
      for (const key of [...processes.keys()]) kill(key);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

function defaultLog(pod: KObject): string[] {
  const name = pod.metadata.name as string;
  return [
    `25/01/01 00:00:00 INFO SparkContext: Running Spark version 3.5.7 (fake pod ${name})`,
    `25/01/01 00:00:01 INFO SparkContext: Submitted application: ${name}`,
    '25/01/01 00:00:02 INFO DAGScheduler: Job 0 finished',
    'Pi is roughly 3.14',
    '25/01/01 00:00:03 INFO SparkContext: Successfully stopped SparkContext',
  ];
}
