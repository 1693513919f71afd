// An in-process fake of the Kubernetes API server: the part of the core/v1 REST API the k8s adapter
// uses (pods, services, secrets, pod logs), answering with real Kubernetes Status objects. Every
// created manifest is checked against the official schema (kubernetes-models) plus the name and
// label rules the real API server enforces, so an adapter that passes here sends valid objects.
// Pods "play" their phases on timers: Pending → Running → Succeeded, or whatever a test sets.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { Pod } from 'kubernetes-models/v1/Pod';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';

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
  /** Serves https with this certificate; with clientCa, also requires a client certificate it signed. */
  tls?: { key: string; cert: string; clientCa?: string };
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
  /** Common name of the client certificate, on https with clientCa. */
  clientCertCN?: string;
  body?: unknown;
  status: number;
}

type Kind = 'pods' | 'services' | 'secrets';

export interface FakeK8sState {
  /** Objects by `namespace/name`. */
  pods: Map<string, KObject>;
  services: Map<string, KObject>;
  secrets: Map<string, KObject>;
  /** Log lines by `namespace/name` of the pod, where a test set them. */
  logs: Map<string, string[]>;
}

export interface FakeK8s {
  /** Base URL of the API server (http://127.0.0.1:port, or https:// with tls). */
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
  stop(): Promise<void>;
}

const KIND: Record<Kind, { kind: string; list: string; model: new (d: never) => { validate(): void } }> = {
  pods: { kind: 'Pod', list: 'PodList', model: Pod as never },
  services: { kind: 'Service', list: 'ServiceList', model: Service as never },
  secrets: { kind: 'Secret', list: 'SecretList', model: Secret as never },
};

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

const rfc3339 = (t = Date.now()) => new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z');

export async function startFakeK8s(opts: FakeK8sOptions = {}): Promise<FakeK8s> {
  const pendingMs = opts.phases?.pendingMs ?? 50;
  const runMsOf = (pod: KObject): number | null => {
    const r = opts.phases?.runMs === undefined ? 250 : opts.phases.runMs;
    return typeof r === 'function' ? r(pod) : r;
  };
  const maxRecorded = opts.maxRecordedRequests ?? 10_000;
  const state: FakeK8sState = { pods: new Map(), services: new Map(), secrets: new Map(), logs: new Map() };
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
    const { kind: k, model } = KIND[kind];
    if (o.kind !== undefined && o.kind !== k)
      throw new HttpError(400, status(400, 'BadRequest', `kind ${o.kind} does not match the ${kind} endpoint`));
    if (o.apiVersion !== undefined && o.apiVersion !== 'v1')
      throw new HttpError(400, status(400, 'BadRequest', `apiVersion ${o.apiVersion} does not match /api/v1`));
    o.apiVersion = 'v1';
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
      play(key, o);
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
            apiVersion: 'v1',
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
            apiVersion: 'v1',
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
    : undefined;

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
        const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
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
      const peer = opts.tls?.clientCa ? (req.socket as TLSSocket).getPeerCertificate?.() : undefined;
      record({
        method: req.method ?? 'GET',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        authorization: req.headers.authorization,
        clientCertCN: peer?.subject?.CN as string | undefined,
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

  const server = opts.tls
    ? https.createServer(
        {
          key: opts.tls.key,
          cert: opts.tls.cert,
          ...(opts.tls.clientCa ? { ca: opts.tls.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
        },
        handler,
      )
    : http.createServer(handler);
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
    url: `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
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
    async stop() {
      for (const key of [...timers.keys()]) clearTimers(key);
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
