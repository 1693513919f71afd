// The Helm chart, rendered and linted by Helm's own engine (deploy/helm/render.py over the helm-python-sdk
// that scripts/setup.sh installs), then every manifest validated: against the Kubernetes schemas
// (kubernetes-models), for fields the API does not know (@kubernetes/client-node's type maps), for the
// name and label rules the API server enforces, and the ServiceMonitor by hand (no schema ships for it).
// Then what the manifests mean: RBAC equal to the calls the k8s adapter makes, probes, wiring, settings.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as k8s from '@kubernetes/client-node';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CHART = path.join(ROOT, 'deploy/helm/spark-orchestrator');
const STACK_DIR = process.env.STACK_DIR ?? path.join(ROOT, '.stack');
const HELM_SDK = path.join(STACK_DIR, 'helm-sdk');
const PYTHON = existsSync(path.join(STACK_DIR, 'venv/bin/python'))
  ? path.join(STACK_DIR, 'venv/bin/python')
  : 'python3';
const RELEASE = 'orch';
const NAMESPACE = 'spark-orchestrator';
const KEY = 'a'.repeat(64);
const SERVICE_ROLE = `${RELEASE}-spark-orchestrator-driver-manager`;
const DRIVER_SA = `${RELEASE}-spark-orchestrator-driver`;
/** Where drivers go by default: their own namespace, not the release's. */
const DRIVERS_NS = `${RELEASE}-drivers`;
const REQUIRED = {
  secrets: { secretKey: KEY, mongoUrl: 'mongodb://app:pw@mongo-0.mongo:27017/?replicaSet=rs0' },
  auth: { adminKey: 'a-bootstrap-admin-key-of-at-least-32-chars' },
};

type KObject = Record<string, any> & { apiVersion: string; kind: string; metadata: Record<string, any> };
interface Rendered {
  manifests: { template: string; object: KObject }[];
  notes: string;
  lint: { messages: { severity: number; path: string; error: string }[]; errors: string[] };
  error?: string;
}

function python(args: string[], input?: string): string {
  return execFileSync(PYTHON, args, {
    input,
    env: { ...process.env, PYTHONPATH: HELM_SDK },
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    // Helm's own warnings would land in the test log; a failure's error carries them.
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

function render(values: Record<string, unknown>, release = RELEASE, namespace = NAMESPACE, chart = CHART): Rendered {
  return JSON.parse(
    python([path.join(ROOT, 'deploy/helm/render.py'), 'chart', chart, release, namespace], JSON.stringify(values)),
  );
}

function objects(values: Record<string, unknown>, release = RELEASE): KObject[] {
  const r = render(values, release);
  if (r.error) throw new Error(`render failed: ${r.error}`);
  return r.manifests.map((m) => m.object);
}

const merge = (...vs: Record<string, any>[]): Record<string, any> =>
  vs.reduce((acc, v) => {
    for (const [k, x] of Object.entries(v))
      acc[k] = x && typeof x === 'object' && !Array.isArray(x) ? merge(acc[k] ?? {}, x) : x;
    return acc;
  }, {});

const find = (objs: KObject[], kind: string, name?: string, namespace?: string) =>
  objs.filter(
    (o) =>
      o.kind === kind &&
      (name === undefined || o.metadata.name === name) &&
      (namespace === undefined || (o.metadata.namespace ?? NAMESPACE) === namespace),
  );
const one = (objs: KObject[], kind: string, name?: string, namespace?: string): KObject => {
  const found = find(objs, kind, name, namespace);
  expect(found, `${kind} ${name ?? ''} ${namespace ?? ''}`).toHaveLength(1);
  return found[0];
};

// ───────────────────────────── validation ─────────────────────────────

type Model = new (data: any) => { validate(): void };
/** Every kind the chart may render: its kubernetes-models class and its @kubernetes/client-node type. */
const KINDS: Record<string, { model: Model; type: string; clusterScoped?: boolean }> = {
  'v1/ConfigMap': { model: ConfigMap, type: 'V1ConfigMap' },
  'v1/Namespace': { model: Namespace, type: 'V1Namespace', clusterScoped: true },
  'v1/Secret': { model: Secret, type: 'V1Secret' },
  'v1/Service': { model: Service, type: 'V1Service' },
  'v1/ServiceAccount': { model: ServiceAccount, type: 'V1ServiceAccount' },
  'v1/PersistentVolumeClaim': { model: PersistentVolumeClaim, type: 'V1PersistentVolumeClaim' },
  'apps/v1/Deployment': { model: Deployment, type: 'V1Deployment' },
  'policy/v1/PodDisruptionBudget': { model: PodDisruptionBudget, type: 'V1PodDisruptionBudget' },
  'networking.k8s.io/v1/NetworkPolicy': { model: NetworkPolicy, type: 'V1NetworkPolicy' },
  'rbac.authorization.k8s.io/v1/Role': { model: Role, type: 'V1Role' },
  'rbac.authorization.k8s.io/v1/RoleBinding': { model: RoleBinding, type: 'V1RoleBinding' },
  'rbac.authorization.k8s.io/v1/ClusterRole': { model: ClusterRole, type: 'V1ClusterRole', clusterScoped: true },
};

const LEAF_TYPES = new Set(['string', 'number', 'boolean', 'Date', 'any', 'object', 'IntOrString']);
/** Paths of fields the Kubernetes API does not define (kubernetes-models lets them through). */
function unknownFields(value: unknown, type: string, at: string): string[] {
  if (value === null || value === undefined || LEAF_TYPES.has(type)) return [];
  const arr = /^Array<(.+)>$/.exec(type);
  if (arr) return Array.isArray(value) ? value.flatMap((v, i) => unknownFields(v, arr[1], `${at}[${i}]`)) : [];
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) return Object.entries(value as object).flatMap(([k, v]) => unknownFields(v, map[1], `${at}.${k}`));
  const cls = (k8s as Record<string, any>)[type];
  if (!cls?.getAttributeTypeMap) throw new Error(`no client type ${type} at ${at}`);
  const attrs = new Map<string, string>(
    (cls.getAttributeTypeMap() as { baseName: string; type: string }[]).map((a) => [a.baseName, a.type]),
  );
  return Object.entries(value as object).flatMap(([k, v]) =>
    attrs.has(k) ? unknownFields(v, attrs.get(k)!, `${at}.${k}`) : [`${at}.${k}`],
  );
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL_1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function checkLabels(where: string, labels: Record<string, string> | undefined, problems: string[]) {
  for (const [k, v] of Object.entries(labels ?? {})) {
    const [prefix, name] = k.includes('/') ? k.split('/') : [undefined, k];
    if (
      (prefix !== undefined && (!DNS_SUBDOMAIN.test(prefix) || prefix.length > 253)) ||
      !QUALIFIED_NAME.test(name) ||
      name.length > 63
    )
      problems.push(`${where}: label key ${k}`);
    if (typeof v !== 'string' || v.length > 63 || !LABEL_VALUE.test(v))
      problems.push(`${where}: label value ${k}=${v}`);
  }
}

/** Problems of one rendered object; empty when the API server would accept it. */
function problemsOf(o: KObject): string[] {
  const where = `${o.kind} ${o.metadata?.name}`;
  if (o.kind === 'ServiceMonitor') return serviceMonitorProblems(o);
  const kind = KINDS[`${o.apiVersion}/${o.kind}`];
  if (!kind) return [`${where}: ${o.apiVersion}/${o.kind} is not a kind this test knows`];
  const problems: string[] = [];
  try {
    new kind.model(o).validate();
  } catch (e) {
    problems.push(`${where}: ${(e as Error).message}`);
  }
  problems.push(...unknownFields(o, kind.type, where));
  const name: string = o.metadata.name;
  const nameRule = o.kind === 'Service' ? DNS_LABEL_1035 : DNS_SUBDOMAIN;
  if (!nameRule.test(name) || name.length > (o.kind === 'Service' ? 63 : 253)) problems.push(`${where}: invalid name`);
  if (kind.clusterScoped && o.metadata.namespace) problems.push(`${where}: cluster-scoped object with a namespace`);
  checkLabels(where, o.metadata.labels, problems);
  const podLabels = o.spec?.template?.metadata?.labels;
  if (podLabels) checkLabels(`${where} pod template`, podLabels, problems);
  return problems;
}

const DURATION = /^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$/;
const seconds = (d: string) => {
  const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(d);
  return m ? Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0) : NaN;
};
const SM_SPEC_KEYS = new Set([
  'endpoints',
  'selector',
  'namespaceSelector',
  'jobLabel',
  'targetLabels',
  'podTargetLabels',
  'sampleLimit',
  'targetLimit',
]);
const SM_ENDPOINT_KEYS = new Set([
  'port',
  'targetPort',
  'path',
  'scheme',
  'interval',
  'scrapeTimeout',
  'honorLabels',
  'honorTimestamps',
  'relabelings',
  'metricRelabelings',
  'params',
  'tlsConfig',
  'bearerTokenSecret',
  'basicAuth',
]);

/** The ServiceMonitor CRD's shape (monitoring.coreos.com/v1), for the fields the chart uses. */
function serviceMonitorProblems(o: KObject): string[] {
  const p: string[] = [];
  const where = `ServiceMonitor ${o.metadata?.name}`;
  if (o.apiVersion !== 'monitoring.coreos.com/v1') p.push(`${where}: apiVersion ${o.apiVersion}`);
  if (!DNS_SUBDOMAIN.test(o.metadata?.name ?? '')) p.push(`${where}: invalid name`);
  checkLabels(where, o.metadata?.labels, p);
  const spec = o.spec ?? {};
  for (const k of Object.keys(spec)) if (!SM_SPEC_KEYS.has(k)) p.push(`${where}: unknown spec.${k}`);
  const sel = spec.selector;
  if (!sel || typeof sel !== 'object' || (!sel.matchLabels && !sel.matchExpressions))
    p.push(`${where}: spec.selector must select`);
  else checkLabels(`${where} selector`, sel.matchLabels, p);
  const ns = spec.namespaceSelector;
  if (
    ns &&
    (Object.keys(ns).some((k) => k !== 'any' && k !== 'matchNames') ||
      (ns.matchNames && !ns.matchNames.every((n: unknown) => typeof n === 'string')))
  )
    p.push(`${where}: spec.namespaceSelector is {any} or {matchNames: [string]}`);
  if (!Array.isArray(spec.endpoints) || spec.endpoints.length === 0)
    p.push(`${where}: spec.endpoints must be a non-empty list`);
  for (const [i, e] of (spec.endpoints ?? []).entries()) {
    for (const k of Object.keys(e)) if (!SM_ENDPOINT_KEYS.has(k)) p.push(`${where}: unknown endpoints[${i}].${k}`);
    if (typeof e.port !== 'string' || !e.port) p.push(`${where}: endpoints[${i}].port must name a Service port`);
    if (e.path !== undefined && !String(e.path).startsWith('/')) p.push(`${where}: endpoints[${i}].path`);
    for (const d of ['interval', 'scrapeTimeout'])
      if (e[d] !== undefined && !DURATION.test(e[d]))
        p.push(`${where}: endpoints[${i}].${d} '${e[d]}' is not a duration`);
    if (e.interval && e.scrapeTimeout && seconds(e.scrapeTimeout) > seconds(e.interval))
      p.push(`${where}: scrapeTimeout exceeds interval`);
  }
  return p;
}

const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

// ───────────────────────────── RBAC the adapter needs ─────────────────────────────

const VERBS: Record<string, string> = {
  create: 'create',
  read: 'get',
  list: 'list',
  delete: 'delete',
  deleteCollection: 'deletecollection',
  patch: 'patch',
  replace: 'update',
};
const RESOURCES: Record<string, string> = {
  Pod: 'pods',
  PodLog: 'pods/log',
  Service: 'services',
  Secret: 'secrets',
  ConfigMap: 'configmaps',
  PersistentVolumeClaim: 'persistentvolumeclaims',
  Event: 'events',
  NetworkPolicy: 'networking.k8s.io/networkpolicies',
};

/** `resource verb` pairs of every CoreV1Api call in the k8s adapter's sources. */
function adapterPermissions(): Set<string> {
  const dir = path.join(ROOT, 'activities/adapters');
  const files = [
    path.join(dir, 'k8s.ts'),
    ...(existsSync(path.join(dir, 'k8s'))
      ? readdirSync(path.join(dir, 'k8s')).map((f) => path.join(dir, 'k8s', f))
      : []),
  ];
  const out = new Set<string>();
  for (const f of files.filter((f) => existsSync(f) && f.endsWith('.ts'))) {
    for (const m of readFileSync(f, 'utf8').matchAll(
      /\.(create|read|list|deleteCollection|delete|patch|replace)Namespaced(\w+)\(/g,
    )) {
      const resource = RESOURCES[m[2]];
      if (!resource) throw new Error(`${f}: ${m[0]} — add its resource to RESOURCES here and to the chart's rbac.yaml`);
      out.add(`${resource} ${VERBS[m[1]]}`);
    }
  }
  return out;
}

const permissionsOf = (rules: { apiGroups?: string[]; resources?: string[]; verbs?: string[] }[]) =>
  new Set(
    rules.flatMap((r) =>
      (r.apiGroups ?? []).flatMap((g) =>
        (r.resources ?? []).flatMap((res) => (r.verbs ?? []).map((v) => `${g ? `${g}/` : ''}${res} ${v}`)),
      ),
    ),
  );

// ───────────────────────────── the tests ─────────────────────────────

let defaults: Rendered;
let everything: KObject[];
const EVERYTHING = merge(REQUIRED, {
  spark: { namespaces: ['spark-a', 'spark-b'] },
  metrics: {
    workerPort: 9464,
    serviceMonitor: {
      enabled: true,
      labels: { release: 'kube-prometheus-stack' },
      bearerTokenSecret: { name: 'prometheus-api-key', key: 'key' },
    },
  },
  networkPolicy: { drivers: { enabled: true } },
  serviceAccount: { createTokenSecret: true },
  rbac: { extraSubjects: [{ kind: 'User', name: 'spark-orchestrator', apiGroup: 'rbac.authorization.k8s.io' }] },
  // Seven digits: Helm reads numbers as floats and would print 3.6e+06 without a conversion.
  config: { extraEnv: { LOCAL_SPARK_THREADS: 4 }, groupIdlePauseMs: 3600000, logsMaxLines: 1000000 },
  api: { replicas: 3, nodeSelector: { pool: 'api' } },
  worker: { replicas: 5, image: { repository: 'registry.example.com/spark-orchestrator-spark' } },
});

beforeAll(() => {
  if (!existsSync(path.join(HELM_SDK, 'helm_python'))) {
    throw new Error(`Helm's chart engine is not installed in ${HELM_SDK}: run scripts/setup.sh`);
  }
  defaults = render(REQUIRED);
  everything = objects(EVERYTHING);
}, 60_000);

describe('the chart renders and lints', () => {
  it('renders with only the required values, and helm lint (strict) finds nothing above info', () => {
    expect(defaults.error).toBeUndefined();
    expect(defaults.lint.errors).toEqual([]);
    expect(defaults.lint.messages.filter((m) => m.severity >= 2)).toEqual([]);
    expect(render(EVERYTHING).lint.messages.filter((m) => m.severity >= 2)).toEqual([]);
    const kinds = defaults.manifests.map((m) => m.object.kind).sort();
    expect(kinds).toEqual(
      [
        'ConfigMap',
        'Deployment',
        'Deployment',
        'Namespace',
        'PersistentVolumeClaim',
        'PodDisruptionBudget',
        'Role',
        'Role',
        'RoleBinding',
        'RoleBinding',
        'Secret',
        'Service',
        'Service',
        'ServiceAccount',
        'ServiceAccount',
      ].sort(),
    );
    expect(defaults.notes).toContain('port-forward');
  });

  it('every manifest passes the Kubernetes schemas, has only known fields and valid names and labels', () => {
    const variants = [
      defaults.manifests.map((m) => m.object),
      everything,
      objects(merge(REQUIRED, { rbac: { useClusterRole: true }, spark: { namespaces: ['spark-a', 'spark-b'] } })),
      objects(
        merge(REQUIRED, {
          persistence: { enabled: false },
          api: { replicas: 1 },
          serviceAccount: { create: false },
          driver: { serviceAccount: { create: false } },
        }),
      ),
      // Helm allows release names of 53 characters: every derived name must still be valid.
      objects(REQUIRED, 'a-very-long-release-name-that-helm-still-accepts-12345'),
    ];
    for (const objs of variants) {
      expect(objs.length).toBeGreaterThan(5);
      expect(objs.flatMap(problemsOf)).toEqual([]);
    }
  });

  it('the validation catches what the API server would refuse', () => {
    const base = one(
      defaults.manifests.map((m) => m.object),
      'Service',
      `${RELEASE}-spark-orchestrator-api`,
    );
    expect(problemsOf({ ...base, spec: { ...base.spec, bogus: 1 } })).toEqual([
      `Service ${base.metadata.name}.spec.bogus`,
    ]);
    expect(problemsOf({ ...base, metadata: { ...base.metadata, name: 'Bad_Name' } })).toEqual([
      'Service Bad_Name: invalid name',
    ]);
    expect(problemsOf({ ...base, spec: { ...base.spec, ports: [{ port: 'x' }] } }).length).toBeGreaterThan(0);
    expect(problemsOf({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'x' } })).toHaveLength(1);
    const sm = one(everything, 'ServiceMonitor');
    expect(
      serviceMonitorProblems({ ...sm, spec: { ...sm.spec, endpoints: [{ port: 'http', interval: '30 seconds' }] } }),
    ).toHaveLength(1);
    expect(serviceMonitorProblems({ ...sm, spec: { ...sm.spec, endpoints: [] } })).toHaveLength(1);
    expect(serviceMonitorProblems({ ...sm, spec: { ...sm.spec, selectr: {} } })).toContain(
      `ServiceMonitor ${sm.metadata.name}: unknown spec.selectr`,
    );
  });

  it('refuses to render without a valid secret key or a MongoDB URL, unless an existing Secret is named', () => {
    const auth = REQUIRED.auth;
    expect(render({ auth }).error).toMatch(/secrets\.secretKey is required/);
    expect(render(merge(REQUIRED, { secrets: { secretKey: 'not-hex' } })).error).toMatch(
      /secrets\.secretKey must be 64 hex characters/,
    );
    expect(render({ auth, secrets: { secretKey: KEY } }).error).toMatch(/secrets\.mongoUrl is required/);
    // The API listens on 0.0.0.0: without an admin key or an OIDC issuer it would refuse to start.
    expect(render({ secrets: REQUIRED.secrets }).error).toMatch(/auth: set auth\.adminKey/);
    expect(render(merge(REQUIRED, { auth: { adminKey: 'short' } })).error).toMatch(/at least 32 characters/);
    const oidc = { issuer: 'https://id.example.com', audience: 'spark-orchestrator' };
    expect(render({ secrets: REQUIRED.secrets, auth: { oidc } }).error).toBe(undefined);
    // The service refuses an issuer without an audience (lib/config.ts): so does the chart.
    expect(render({ secrets: REQUIRED.secrets, auth: { oidc: { issuer: oidc.issuer } } }).error).toMatch(
      /auth\.oidc\.audience is required/,
    );
    expect(render(merge(REQUIRED, { config: { extraEnv: { MONGO_DB: 'x' } } })).error).toMatch(
      /config\.extraEnv\.MONGO_DB/,
    );
    const objs = objects({ secrets: { existingSecret: 'my-secret' } });
    expect(find(objs, 'Secret')).toEqual([]);
    for (const d of find(objs, 'Deployment'))
      expect(d.spec.template.spec.containers[0].envFrom).toContainEqual({ secretRef: { name: 'my-secret' } });
  }, 60_000);
});

describe('configuration', () => {
  const envOf = (objs: KObject[]) => {
    const cm = one(objs, 'ConfigMap');
    const secret = one(objs, 'Secret', `${RELEASE}-spark-orchestrator`);
    const secretEnv = Object.fromEntries(
      Object.entries(secret.data as Record<string, string>).map(([k, v]) => [
        k,
        Buffer.from(v, 'base64').toString('utf8'),
      ]),
    );
    return { ...cm.data, ...secretEnv } as Record<string, string>;
  };
  const settings = () =>
    [...readFileSync(path.join(ROOT, 'lib/config.ts'), 'utf8').matchAll(/^ {2}([A-Z][A-Z0-9_]+): z\./gm)].map(
      (m) => m[1],
    );

  it('gives the service a configuration its own loader accepts, with the chart values in it', () => {
    const env = envOf(everything);
    const config = loadConfig(env);
    expect(config.SECRET_KEY).toBe(KEY);
    expect(config.MONGO_URL).toBe(REQUIRED.secrets.mongoUrl);
    expect(config.API_PORT).toBe(9888);
    expect(config.API_HOST).toBe('0.0.0.0');
    expect(config.K8S_NAMESPACE).toBe('spark-a');
    expect(config.K8S_SPARK_IMAGE).toBe('apache/spark:3.5.7-python3');
    expect(config.TEMPORAL_ADDRESS).toBe('temporal-frontend.temporal.svc:7233');
    expect(config.ARTIFACT_DIR).toBe('/var/lib/spark-orchestrator/artifacts');
    expect(config.LOCAL_SPARK_THREADS).toBe(4);
    expect(config.GROUP_IDLE_PAUSE_MS).toBe(3_600_000);
    expect(config.LOGS_MAX_LINES).toBe(1_000_000);
    expect(env.LOG_FORMAT).toBe('json');
    expect(loadConfig(envOf(defaults.manifests.map((m) => m.object))).K8S_NAMESPACE).toBe(DRIVERS_NS);
  });

  it('writes large numbers from a values file as integers (Helm reads YAML numbers as floats)', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'chart-'));
    try {
      const chart = path.join(dir, 'spark-orchestrator');
      cpSync(CHART, chart, { recursive: true });
      const values = readFileSync(path.join(chart, 'values.yaml'), 'utf8');
      const bigger = values
        .replace(/^( {2}groupIdlePauseMs:) \d+$/m, '$1 3600000')
        .replace(/^( {2}logsMaxLines:) \d+$/m, '$1 1000000')
        .replace(/^( {2}extraEnv:) \{\}$/m, '$1 {BIG: 2000000, RATIO: 0.5, NAME: x}');
      expect(bigger).not.toBe(values);
      writeFileSync(path.join(chart, 'values.yaml'), bigger);
      const r = render(REQUIRED, RELEASE, NAMESPACE, chart);
      expect(r.error).toBeUndefined();
      const env = envOf(r.manifests.map((m) => m.object));
      expect([env.GROUP_IDLE_PAUSE_MS, env.LOGS_MAX_LINES, env.BIG, env.RATIO, env.NAME]).toEqual([
        '3600000',
        '1000000',
        '2000000',
        '0.5',
        'x',
      ]);
      expect(loadConfig(env).GROUP_IDLE_PAUSE_MS).toBe(3_600_000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('defines no key twice (Helm refuses a values.yaml or a manifest with a repeated key)', () => {
    // Keys at the same indentation under the same parent, read line by line: enough for these two files.
    const repeated = (text: string): string[] => {
      const seen = new Map<string, number>();
      const parents: [indent: number, key: string][] = [];
      const out: string[] = [];
      for (const line of text.split('\n')) {
        const m = /^( *)([A-Za-z_][\w.-]*):(\s|$)/.exec(line);
        if (!m) continue;
        const indent = m[1].length;
        while (parents.length && parents.at(-1)![0] >= indent) parents.pop();
        const key = [...parents.map((p) => p[1]), m[2]].join('.');
        seen.set(key, (seen.get(key) ?? 0) + 1);
        if (seen.get(key) === 2) out.push(key);
        parents.push([indent, m[2]]);
      }
      return out;
    };
    expect(repeated(readFileSync(path.join(CHART, 'values.yaml'), 'utf8'))).toEqual([]);
    expect(repeated(readFileSync(path.join(CHART, 'templates/configmap.yaml'), 'utf8'))).toEqual([]);
  });

  it('sets only variables the service reads, and values.yaml documents every setting of lib/config.ts', () => {
    const known = new Set([...settings(), 'LOG_FORMAT']);
    expect(settings().length).toBeGreaterThan(15);
    const env = envOf(everything);
    expect(Object.keys(env).filter((k) => !known.has(k))).toEqual([]);
    const values = readFileSync(path.join(CHART, 'values.yaml'), 'utf8');
    expect([...known].filter((s) => !values.includes(s))).toEqual([]);
  });
});

describe('API and worker', () => {
  const deployments = (objs: KObject[]) => ({
    api: one(objs, 'Deployment', `${RELEASE}-spark-orchestrator-api`),
    worker: one(objs, 'Deployment', `${RELEASE}-spark-orchestrator-worker`),
  });

  it('are two Deployments scaled independently, running the compiled entry points as a non-root user', () => {
    const { api, worker } = deployments(everything);
    expect(api.spec.replicas).toBe(3);
    expect(worker.spec.replicas).toBe(5);
    expect(api.spec.template.spec.containers[0].command).toEqual(['node', 'dist/api.js']);
    expect(worker.spec.template.spec.containers[0].command).toEqual(['node', 'dist/worker.js']);
    expect(api.spec.template.spec.containers[0].image).toBe('spark-orchestrator:0.1.0');
    expect(worker.spec.template.spec.containers[0].image).toBe('registry.example.com/spark-orchestrator-spark:0.1.0');
    expect(api.spec.template.spec.nodeSelector).toEqual({ pool: 'api' });
    expect(worker.spec.template.spec.nodeSelector).toBeUndefined();
    for (const d of [api, worker]) {
      const pod = d.spec.template.spec;
      expect(matches(d.spec.selector.matchLabels, d.spec.template.metadata.labels)).toBe(true);
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 185 });
      expect(pod.containers[0].securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      expect(pod.containers[0].volumeMounts.map((m: any) => m.mountPath).sort()).toEqual([
        '/tmp',
        '/var/lib/spark-orchestrator',
      ]);
      expect(d.spec.template.metadata.annotations['checksum/config']).toMatch(/^[0-9a-f]{64}$/);
    }
    // The selectors must not overlap: each Deployment owns only its own pods.
    expect(matches(api.spec.selector.matchLabels, worker.spec.template.metadata.labels)).toBe(false);
    expect(matches(worker.spec.selector.matchLabels, api.spec.template.metadata.labels)).toBe(false);
  });

  it('refer only to objects the chart renders: ConfigMap, Secret, ServiceAccount, the shared claim', () => {
    const { api, worker } = deployments(everything);
    for (const d of [api, worker]) {
      const pod = d.spec.template.spec;
      expect(one(everything, 'ServiceAccount', pod.serviceAccountName, NAMESPACE)).toBeTruthy();
      for (const from of pod.containers[0].envFrom) {
        if (from.configMapRef) one(everything, 'ConfigMap', from.configMapRef.name);
        if (from.secretRef) one(everything, 'Secret', from.secretRef.name);
      }
      const claim = pod.volumes.find((v: any) => v.name === 'state').persistentVolumeClaim.claimName;
      expect(one(everything, 'PersistentVolumeClaim', claim).spec.accessModes).toEqual(['ReadWriteMany']);
    }
  });

  it('probes the API on /api/v1/health through its named port; the worker has no HTTP probe', () => {
    const { api, worker } = deployments(everything);
    const c = api.spec.template.spec.containers[0];
    expect(c.ports).toEqual([
      { name: 'http', containerPort: 9888, protocol: 'TCP' },
      { name: 'livy', containerPort: 8998, protocol: 'TCP' },
    ]);
    for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe'])
      expect(c[probe].httpGet).toEqual({ path: '/api/v1/health', port: 'http' });
    const w = worker.spec.template.spec.containers[0];
    expect(w.livenessProbe ?? w.readinessProbe ?? w.startupProbe).toBeUndefined();
    expect(w.ports).toEqual([{ name: 'metrics', containerPort: 9464, protocol: 'TCP' }]);
  });

  it('exposes the API through a Service selecting only API pods, and a disruption budget keeps one', () => {
    const { api, worker } = deployments(everything);
    const svc = one(everything, 'Service', `${RELEASE}-spark-orchestrator-api`);
    expect(svc.spec.ports).toEqual([
      { name: 'http', port: 9888, targetPort: 'http', protocol: 'TCP' },
      { name: 'livy', port: 8998, targetPort: 'livy', protocol: 'TCP' },
    ]);
    expect(matches(svc.spec.selector, api.spec.template.metadata.labels)).toBe(true);
    expect(matches(svc.spec.selector, worker.spec.template.metadata.labels)).toBe(false);
    const pdb = one(everything, 'PodDisruptionBudget');
    expect(pdb.spec.minAvailable).toBe(1);
    expect(matches(pdb.spec.selector.matchLabels, api.spec.template.metadata.labels)).toBe(true);
    expect(find(objects(merge(REQUIRED, { api: { replicas: 1 } })), 'PodDisruptionBudget')).toEqual([]);
  });
});

describe('RBAC', () => {
  it('grants the service exactly the calls the k8s adapter makes, in each Spark namespace only', () => {
    const needed = adapterPermissions();
    expect(needed).toContain('pods create');
    expect(needed).toContain('pods/log get');
    for (const ns of ['spark-a', 'spark-b']) {
      const role = one(everything, 'Role', SERVICE_ROLE, ns);
      expect(permissionsOf(role.rules)).toEqual(needed);
      const binding = one(everything, 'RoleBinding', SERVICE_ROLE, ns);
      expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: SERVICE_ROLE });
      expect(binding.subjects).toEqual([
        { kind: 'ServiceAccount', name: `${RELEASE}-spark-orchestrator`, namespace: NAMESPACE },
        { kind: 'User', name: 'spark-orchestrator', apiGroup: 'rbac.authorization.k8s.io' },
      ]);
    }
    expect(find(everything, 'Role', SERVICE_ROLE, NAMESPACE)).toEqual([]);
    expect(find(everything, 'ClusterRole')).toEqual([]);
    // Reading secrets back would expose every secret of a namespace: the adapter never does.
    expect([...needed].filter((p) => p.startsWith('secrets ') && !/ (create|delete)$/.test(p))).toEqual([]);
  });

  it('with useClusterRole, binds one ClusterRole per kind in each Spark namespace, still no cluster-wide binding', () => {
    const objs = objects(
      merge(REQUIRED, { rbac: { useClusterRole: true }, spark: { namespaces: ['spark-a', 'spark-b'] } }),
    );
    expect(find(objs, 'Role')).toEqual([]);
    expect(permissionsOf(one(objs, 'ClusterRole', SERVICE_ROLE).rules)).toEqual(adapterPermissions());
    one(objs, 'ClusterRole', DRIVER_SA);
    for (const ns of ['spark-a', 'spark-b']) {
      expect(one(objs, 'RoleBinding', SERVICE_ROLE, ns).roleRef.kind).toBe('ClusterRole');
      expect(one(objs, 'RoleBinding', DRIVER_SA, ns).roleRef).toEqual({
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: DRIVER_SA,
      });
    }
    expect(objs.filter((o) => o.kind === 'ClusterRoleBinding')).toEqual([]);
  });

  it("gives drivers their own service account in each Spark namespace, with exactly what Spark's driver needs", () => {
    // Executors: create, watch, list, delete (one by one and by label); its own pod: get. The executors'
    // configmap: create, and delete by label with the services when it stops.
    const needed = [
      ...['create', 'get', 'list', 'watch', 'delete', 'deletecollection'].map((v) => `pods ${v}`),
      ...['services', 'configmaps'].flatMap((r) =>
        ['create', 'get', 'list', 'delete', 'deletecollection'].map((v) => `${r} ${v}`),
      ),
    ];
    for (const ns of ['spark-a', 'spark-b']) {
      one(everything, 'ServiceAccount', DRIVER_SA, ns);
      const granted = permissionsOf(one(everything, 'Role', DRIVER_SA, ns).rules);
      expect(granted).toEqual(new Set(needed));
      // The job's code runs with this identity: no secrets, nothing beyond the core resources above.
      expect(
        [...granted].filter((p) =>
          /^secrets|^persistentvolumeclaims| (update|patch|escalate|bind|impersonate)$/.test(p),
        ),
      ).toEqual([]);
      expect(one(everything, 'RoleBinding', DRIVER_SA, ns).subjects).toEqual([
        { kind: 'ServiceAccount', name: DRIVER_SA, namespace: ns },
      ]);
    }
    // On-demand PVC volumes need claims, only when asked for.
    const withPvc = objects(merge(REQUIRED, { driver: { serviceAccount: { persistentVolumeClaims: true } } }));
    const granted = permissionsOf(one(withPvc, 'Role', DRIVER_SA, DRIVERS_NS).rules);
    expect(granted).toContain('persistentvolumeclaims create');
    expect(granted).toContain('persistentvolumeclaims deletecollection');
    expect([...granted].filter((p) => p.startsWith('secrets'))).toEqual([]);
  });

  it('puts drivers in a namespace of their own by default, created with the baseline Pod Security Standard', () => {
    const objs = defaults.manifests.map((m) => m.object);
    const ns = one(objs, 'Namespace', DRIVERS_NS);
    expect(ns.metadata.labels).toMatchObject({
      'pod-security.kubernetes.io/enforce': 'baseline',
      'pod-security.kubernetes.io/warn': 'baseline',
    });
    expect(DRIVERS_NS).not.toBe(NAMESPACE);
    // The driver identity and the service's rights to create drivers are there, not beside the release's Secret.
    one(objs, 'ServiceAccount', DRIVER_SA, DRIVERS_NS);
    one(objs, 'Role', DRIVER_SA, DRIVERS_NS);
    one(objs, 'RoleBinding', DRIVER_SA, DRIVERS_NS);
    one(objs, 'Role', SERVICE_ROLE, DRIVERS_NS);
    expect(find(objs, 'ServiceAccount', DRIVER_SA, NAMESPACE)).toEqual([]);
    expect(find(objs, 'Role', SERVICE_ROLE, NAMESPACE)).toEqual([]);
    // The release's Secret (SECRET_KEY, MONGO_URL) stays in the release namespace, out of the drivers' reach.
    expect(one(objs, 'Secret', `${RELEASE}-spark-orchestrator`).metadata.namespace ?? NAMESPACE).toBe(NAMESPACE);
    // Named namespaces are created beforehand; the chart can be told not to create its own.
    expect(find(everything, 'Namespace')).toEqual([]);
    expect(find(objects(merge(REQUIRED, { spark: { createNamespace: false } })), 'Namespace')).toEqual([]);
    const unlabelled = one(objects(merge(REQUIRED, { spark: { podSecurity: '' } })), 'Namespace', DRIVERS_NS);
    expect(Object.keys(unlabelled.metadata.labels).filter((k) => k.startsWith('pod-security'))).toEqual([]);
    expect(defaults.notes).toContain(`go to namespace ${DRIVERS_NS}`);
    expect(defaults.notes).toContain('allowedAccessSettings');
    expect(defaults.notes).not.toContain('WARNING');
    expect(render(merge(REQUIRED, { spark: { namespaces: [NAMESPACE] } })).notes).toContain(
      `WARNING: spark.namespaces includes the release namespace ${NAMESPACE}`,
    );
  });

  it("with rbac.create=false, renders no roles or bindings but still the drivers' service account", () => {
    const objs = objects(merge(REQUIRED, { rbac: { create: false } }));
    expect(objs.filter((o) => /Role/.test(o.kind))).toEqual([]);
    one(objs, 'ServiceAccount', DRIVER_SA, DRIVERS_NS);
  });

  it('offers a token Secret of the service account, off by default', () => {
    const token = one(everything, 'Secret', `${RELEASE}-spark-orchestrator-token`);
    expect(token.type).toBe('kubernetes.io/service-account-token');
    expect(token.metadata.annotations['kubernetes.io/service-account.name']).toBe(`${RELEASE}-spark-orchestrator`);
    expect(
      find(
        defaults.manifests.map((m) => m.object),
        'Secret',
      ),
    ).toHaveLength(1);
  });
});

describe('ServiceMonitor and NetworkPolicy', () => {
  it('are off by default', () => {
    const objs = defaults.manifests.map((m) => m.object);
    expect(find(objs, 'ServiceMonitor')).toEqual([]);
    expect(find(objs, 'NetworkPolicy')).toEqual([]);
  });

  it('the ServiceMonitor scrapes the API Service port and the worker metrics Service', () => {
    const sm = one(everything, 'ServiceMonitor');
    expect(serviceMonitorProblems(sm)).toEqual([]);
    expect(sm.metadata.labels.release).toBe('kube-prometheus-stack');
    // /metrics of the API needs a viewer key when authentication is on; the worker's needs none.
    expect(sm.spec.endpoints.map((e: any) => e.bearerTokenSecret)).toEqual([
      { name: 'prometheus-api-key', key: 'key' },
      undefined,
    ]);
    expect(sm.spec.namespaceSelector).toEqual({ matchNames: [NAMESPACE] });
    const selected = find(everything, 'Service').filter((s) =>
      matches(sm.spec.selector.matchLabels, s.metadata.labels),
    );
    expect(selected.map((s) => s.metadata.name).sort()).toEqual([
      `${RELEASE}-spark-orchestrator-api`,
      `${RELEASE}-spark-orchestrator-worker-metrics`,
    ]);
    const portNames = new Set(selected.flatMap((s) => s.spec.ports.map((p: any) => p.name)));
    expect(sm.spec.endpoints.map((e: any) => [e.port, e.path])).toEqual([
      ['http', '/metrics'],
      ['metrics', '/metrics'],
    ]);
    for (const e of sm.spec.endpoints) expect(portNames).toContain(e.port);
  });

  it('the NetworkPolicy selects driver pods and admits executors and this release only', () => {
    // Labels the k8s adapter puts on a driver pod, and those Spark gives its executors.
    const driverPod = {
      'app.kubernetes.io/managed-by': 'spark-orchestrator',
      'spark-role': 'driver',
      'spark-orchestrator.io/driver-id': 'j-1',
    };
    const executorPod = {
      'spark-role': 'executor',
      'spark-orchestrator.io/driver-id': 'j-1',
      'spark-app-selector': 'spark-1',
    };
    const apiPod = one(everything, 'Deployment', `${RELEASE}-spark-orchestrator-api`).spec.template.metadata.labels;
    for (const ns of ['spark-a', 'spark-b']) {
      const np = one(everything, 'NetworkPolicy', undefined, ns);
      expect(matches(np.spec.podSelector.matchLabels, driverPod)).toBe(true);
      expect(matches(np.spec.podSelector.matchLabels, executorPod)).toBe(false);
      expect(np.spec.policyTypes).toEqual(['Ingress']);
      const [fromExecutors, fromRelease] = np.spec.ingress;
      const exec = fromExecutors.from[0].podSelector;
      expect(
        matches(exec.matchLabels, executorPod) &&
          exec.matchExpressions.every((x: any) => x.operator === 'Exists' && x.key in executorPod),
      ).toBe(true);
      expect(fromExecutors.ports.map((p: any) => p.port)).toEqual([7078, 7079]);
      expect(fromRelease.from[0].namespaceSelector.matchLabels).toEqual({ 'kubernetes.io/metadata.name': NAMESPACE });
      expect(matches(fromRelease.from[0].podSelector.matchLabels, apiPod)).toBe(true);
      expect(np.spec.ingress).toHaveLength(2);
    }
  });
});

describe('docs/deploy.md', () => {
  it('its RBAC manifests for clusters outside the release are valid and grant what the chart grants', () => {
    const md = readFileSync(path.join(ROOT, 'docs/deploy.md'), 'utf8');
    const blocks = [...md.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]).filter((b) => /^kind: /m.test(b));
    expect(blocks.length).toBeGreaterThan(0);
    const docs: KObject[] = blocks.flatMap((b) =>
      JSON.parse(python([path.join(ROOT, 'deploy/helm/render.py'), 'yaml', '-'], b)),
    );
    expect(docs.flatMap(problemsOf)).toEqual([]);
    const roles = docs.filter((o) => o.kind === 'Role');
    expect(roles).toHaveLength(2);
    const [service, driver] = roles;
    expect(permissionsOf(service.rules)).toEqual(adapterPermissions());
    expect(permissionsOf(driver.rules)).toEqual(permissionsOf(one(everything, 'Role', DRIVER_SA, 'spark-a').rules));
  });
});
