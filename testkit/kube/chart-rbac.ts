// The Helm chart's RBAC on a real API server: deploy/helm's chart rendered by Helm's own engine
// (deploy/helm/render.py over the helm-python-sdk that scripts/setup.sh installs, as
// test/unit/helm-chart.test.ts does), its service accounts, Roles, ClusterRoles and RoleBindings created,
// and the service's own account's token issued by TokenRequest: the service then has exactly the rights a
// release of the chart gives it, whatever the chart says today.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createNamespace, kubeRequest, REPO_ROOT, serviceAccountToken, type ControlPlaneInfo } from './control-plane';

const STACK_DIR = process.env.STACK_DIR ?? path.join(REPO_ROOT, '.stack');
const HELM_SDK = path.join(STACK_DIR, 'helm-sdk');
const PYTHON = path.join(STACK_DIR, 'venv/bin/python');
const CHART = path.join(REPO_ROOT, 'deploy/helm/spark-orchestrator');
/** Values every render needs (the chart refuses to render without them); none of them is RBAC. */
const REQUIRED = {
  secrets: { secretKey: 'a'.repeat(64), mongoUrl: 'mongodb://app:pw@mongo-0.mongo:27017/?replicaSet=rs0' },
  auth: { adminKey: 'a-bootstrap-admin-key-of-at-least-32-chars' },
};

export const helmAvailable = () => existsSync(HELM_SDK) && existsSync(PYTHON);

type KObject = Record<string, any> & { apiVersion: string; kind: string; metadata: Record<string, any> };

const PATHS: Record<string, (ns: string) => string> = {
  Namespace: () => '/api/v1/namespaces',
  ServiceAccount: (ns) => `/api/v1/namespaces/${ns}/serviceaccounts`,
  Role: (ns) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`,
  RoleBinding: (ns) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`,
  ClusterRole: () => '/apis/rbac.authorization.k8s.io/v1/clusterroles',
  ClusterRoleBinding: () => '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
};

/** The chart's namespaces, identities and RBAC objects for a release in `namespace`. */
export function renderChartRbac(release: string, namespace: string, values: Record<string, unknown> = {}): KObject[] {
  const out = execFileSync(
    PYTHON,
    [path.join(REPO_ROOT, 'deploy/helm/render.py'), 'chart', CHART, release, namespace],
    {
      input: JSON.stringify({ ...REQUIRED, ...values }),
      env: { ...process.env, PYTHONPATH: HELM_SDK },
      encoding: 'utf8',
      // Helm's own warnings would land in the test log; a failure's error carries them.
      stdio: ['pipe', 'pipe', 'pipe'],
      maxBuffer: 64 << 20,
    },
  );
  const r = JSON.parse(out) as { manifests: { object: KObject }[]; error?: string };
  if (r.error) throw new Error(`the chart does not render: ${r.error}`);
  return r.manifests.map((m) => m.object).filter((o) => o.kind in PATHS);
}

export interface ChartRelease {
  /** The service's account (the chart's serviceAccount, in the release namespace) and its TokenRequest token. */
  serviceAccount: string;
  token: string;
  /** Where the service creates drivers (its K8S_NAMESPACE): the namespace the chart grants it its role in. */
  driverNamespace: string;
  /** The drivers' account in the Spark namespace. */
  driverServiceAccount?: string;
  objects: KObject[];
}

/**
 * Creates the release namespace, then the chart's namespaces, accounts, roles and bindings for a release
 * there, and returns the service account's token. ClusterRoles are shared by releases of the same name, so
 * one that exists is left as it is.
 */
export async function installChartRbac(
  cp: ControlPlaneInfo,
  release: string,
  namespace: string,
  values: Record<string, unknown> = {},
): Promise<ChartRelease> {
  await createNamespace(cp, namespace);
  const objects = renderChartRbac(release, namespace, values);
  const order = ['Namespace', 'ServiceAccount', 'ClusterRole', 'Role', 'ClusterRoleBinding', 'RoleBinding'];
  objects.sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind));
  for (const o of objects) {
    const ns = o.metadata.namespace ?? namespace;
    const r = await kubeRequest(cp, cp.adminToken, 'POST', PATHS[o.kind](ns), o);
    if (r.status !== 201 && r.status !== 409)
      throw new Error(`create ${o.kind} ${o.metadata.name}: ${r.status} ${r.text.slice(0, 500)}`);
    // Pods need the namespace's default account, which the controller-manager makes.
    if (o.kind === 'Namespace') await createNamespace(cp, o.metadata.name as string);
  }
  const binding = objects.find((o) => o.kind === 'RoleBinding' && String(o.roleRef?.name).endsWith('-driver-manager'));
  const subject = binding?.subjects?.find((s: { kind: string }) => s.kind === 'ServiceAccount');
  if (!binding || !subject)
    throw new Error(`the chart's release ${release} binds its driver-manager role to no service account`);
  const token = await serviceAccountToken(cp, subject.namespace ?? namespace, subject.name);
  const driverNamespace = (binding.metadata.namespace ?? namespace) as string;
  const driverServiceAccount = objects.find(
    (o) => o.kind === 'ServiceAccount' && o.metadata.namespace === driverNamespace && o.metadata.name !== subject.name,
  )?.metadata.name as string | undefined;
  return { serviceAccount: subject.name, token, driverNamespace, driverServiceAccount, objects };
}

/**
 * A TokenRequest token of a new account in `namespace` bound to the chart's driver-manager rules except `verbs`
 * on `resource`: the service as a release of the chart runs it, short of those rights. Named after what it
 * lacks, so the API server's refusal names it too (`without-<resource>-<verbs>`).
 */
export async function tokenWithout(
  cp: ControlPlaneInfo,
  release: ChartRelease,
  namespace: string,
  resource: string,
  verbs: string[],
): Promise<string> {
  const role = release.objects.find(
    (o) =>
      o.kind === 'Role' && String(o.metadata.name).endsWith('-driver-manager') && o.metadata.namespace === namespace,
  );
  if (!role) throw new Error(`the chart renders no driver-manager Role in ${namespace}`);
  type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };
  const rules = (role.rules as Rule[]).flatMap((r) => {
    if (!r.resources.includes(resource)) return [r];
    const others = r.resources.filter((x) => x !== resource);
    const left = r.verbs.filter((v) => !verbs.includes(v));
    return [
      ...(others.length ? [{ ...r, resources: others }] : []),
      ...(left.length ? [{ ...r, resources: [resource], verbs: left }] : []),
    ];
  });
  const name = `without-${resource}-${verbs.join('-')}`.replace(/[^a-z0-9-]/g, '-');
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  for (const [p, body] of [
    [`/api/v1/namespaces/${namespace}/serviceaccounts`, { metadata: { name } }],
    [`${rbac}/namespaces/${namespace}/roles`, { metadata: { name }, rules }],
    [
      `${rbac}/namespaces/${namespace}/rolebindings`,
      {
        metadata: { name },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
        subjects: [{ kind: 'ServiceAccount', name, namespace }],
      },
    ],
  ] as const) {
    const r = await kubeRequest(cp, cp.adminToken, 'POST', p, body);
    if (r.status !== 201 && r.status !== 409) throw new Error(`${p}: ${r.status} ${r.text}`);
  }
  return serviceAccountToken(cp, namespace, name);
}
