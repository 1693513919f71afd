// A real Kubernetes control plane for tests: etcd, kube-apiserver and kube-controller-manager 1.34 (built by
// scripts/setup-k8s.sh into the cache outside the clone) as child processes on free loopback ports, with
// RBAC, a CA of our own for the API server's serving certificate, service-account signing keys, a token
// file for a bootstrap admin, and TokenRequest tokens for service accounts. The controller-manager runs
// what the tests rely on: the `default` service account of every namespace (without it the API server
// refuses pods), the garbage collector (objects owned by a pod go with it) and namespace deletion.
// Client certificates: the API server also trusts a client CA of its own (client-ca.crt, next to the serving
// CA in --client-ca-file), whose certificates issueClientCert makes for a user (CN) and groups (O).
// No scheduler: testkit/kube/kubelet.ts binds the pods of its namespaces to its own node.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createPrivateKey, randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { freePort } from '../servers';
import { sleep } from '../wait';

export const K8S_VERSION = '1.34.3';
const ROOT = path.resolve(import.meta.dirname, '../..');

const CACHE =
  process.env.SPARK_ORCH_CACHE ??
  path.join(process.env.XDG_CACHE_HOME ?? path.join(process.env.HOME ?? '/root', '.cache'), 'spark-orchestrator');

/** Where scripts/setup-k8s.sh installs the binaries. */
export const k8sBinDir = () => path.join(CACHE, `k8s-v${K8S_VERSION}`);

const installed = () =>
  ['etcd', 'kube-apiserver', 'kube-controller-manager'].every((b) => existsSync(path.join(k8sBinDir(), b)));

/** The pid of a scripts/setup-k8s.sh build running now, if any. */
function buildRunning(): number | undefined {
  try {
    const pid = Number(readFileSync(path.join(CACHE, 'k8s-build.lock', 'pid'), 'utf8'));
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

/** Whether the control plane's binaries are installed, or being built (npm test's setup builds them in the background). */
export const k8sAvailable = () => installed() || buildRunning() !== undefined;

/** Waits for a background build of the binaries to end; throws with its log when it failed. */
export async function waitForK8sBinaries(timeoutMs = 20 * 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!installed() && buildRunning() !== undefined && Date.now() < deadline) await sleep(2000);
  if (installed()) return;
  const log = path.join(CACHE, 'k8s-build.log');
  throw new Error(
    `no Kubernetes binaries in ${k8sBinDir()} (scripts/setup-k8s.sh); the build's log ends:\n${tail(log)}`,
  );
}

/** What a test needs to talk to the control plane; plain data, so it can cross vitest's processes. */
export interface ControlPlaneInfo {
  /** https://127.0.0.1:<port> */
  url: string;
  /** PEM of the CA that signed the API server's certificate (a cluster document's caCert). */
  caCert: string;
  /** A bootstrap admin (system:masters) from the API server's token file. */
  adminToken: string;
  /** Folder with the keys, the logs and etcd's data. */
  dir: string;
  /** Process ids of etcd, kube-apiserver and kube-controller-manager, for whoever stops them. */
  pids: number[];
  /** Milliseconds from the first process started to /readyz answering ok and the default account existing. */
  startMs: number;
}

export interface ControlPlane extends ControlPlaneInfo {
  stop(): Promise<void>;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** CA, the API server's certificate (127.0.0.1, localhost, kubernetes.default.svc) and the service-account keys. */
function makeKeys(dir: string): void {
  openssl(dir, ['genrsa', '-out', 'ca.key', '2048']);
  openssl(dir, [
    'req',
    '-x509',
    '-new',
    '-key',
    'ca.key',
    '-subj',
    '/CN=test-kube-ca',
    '-days',
    '30',
    '-out',
    'ca.crt',
  ]);
  openssl(dir, ['genrsa', '-out', 'apiserver.key', '2048']);
  openssl(dir, ['req', '-new', '-key', 'apiserver.key', '-subj', '/CN=kube-apiserver', '-out', 'apiserver.csr']);
  writeFileSync(
    path.join(dir, 'apiserver.ext'),
    'subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\n' +
      'extendedKeyUsage=serverAuth\n',
  );
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    'apiserver.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '30',
    '-extfile',
    'apiserver.ext',
    '-out',
    'apiserver.crt',
  ]);
  openssl(dir, ['genrsa', '-out', 'sa.key', '2048']);
  openssl(dir, ['rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub']);
  // The client CA; --client-ca-file is a bundle of the serving CA (trusted as before) and this one.
  selfSignedCa(dir, 'client-ca', 'test-kube-client-ca');
  writeFileSync(
    path.join(dir, 'client-ca-bundle.crt'),
    readFileSync(path.join(dir, 'ca.crt'), 'utf8') + readFileSync(path.join(dir, 'client-ca.crt'), 'utf8'),
  );
}

/** <name>.key and <name>.crt of a new CA (EC P-256) in `dir`. */
function selfSignedCa(dir: string, name: string, cn: string): void {
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-subj',
    `/CN=${cn}`,
    '-days',
    '30',
    '-out',
    `${name}.crt`,
  ]);
}

/** A client certificate and its private key, PEM. */
export interface ClientCertificate {
  cert: string;
  /** PKCS#8 PEM; encrypted (aes-256-cbc) when a passphrase was given. */
  key: string;
}

/**
 * A client certificate for `user` (its CN; the API server's user name) in `groups` (its O fields; the user's
 * groups), signed by the control plane's client CA, or with `foreignCa` by a CA of its own the API server
 * does not trust. The key is encrypted with `passphrase` when one is given. Nothing is logged; the files
 * are removed once read.
 */
export function issueClientCert(
  cp: Pick<ControlPlaneInfo, 'dir'>,
  o: { user: string; groups?: string[]; passphrase?: string; foreignCa?: boolean; days?: number },
): ClientCertificate {
  const names = [o.user, ...(o.groups ?? [])];
  if (names.some((n) => !n || /[/\\\n]/.test(n))) throw new Error('issueClientCert: user and groups without / or \\');
  if (!o.foreignCa && !existsSync(path.join(cp.dir, 'client-ca.key')))
    throw new Error(`no client CA in ${cp.dir}: a control plane started before client certificates`);
  const work = mkdtempSync(path.join(cp.dir, 'client-cert-'));
  try {
    const ca = o.foreignCa ? path.join(work, 'foreign-ca') : path.join(cp.dir, 'client-ca');
    if (o.foreignCa) selfSignedCa(work, 'foreign-ca', 'some-other-ca');
    openssl(work, [
      'req',
      '-new',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      'client.key',
      '-subj',
      `/CN=${o.user}${(o.groups ?? []).map((g) => `/O=${g}`).join('')}`,
      '-out',
      'client.csr',
    ]);
    writeFileSync(path.join(work, 'client.ext'), 'keyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n');
    openssl(work, [
      'x509',
      '-req',
      '-in',
      'client.csr',
      '-CA',
      `${ca}.crt`,
      '-CAkey',
      `${ca}.key`,
      // A serial of its own: no serial file shared by concurrent calls.
      '-set_serial',
      `0x${randomBytes(16).toString('hex')}`,
      '-days',
      String(o.days ?? 30),
      '-extfile',
      'client.ext',
      '-out',
      'client.crt',
    ]);
    const plain = createPrivateKey(readFileSync(path.join(work, 'client.key'), 'utf8'));
    const key = (
      o.passphrase
        ? plain.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: o.passphrase })
        : plain.export({ type: 'pkcs8', format: 'pem' })
    ) as string;
    return { cert: readFileSync(path.join(work, 'client.crt'), 'utf8'), key };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function startProcess(bin: string, args: string[], logFile: string): ChildProcess {
  const fd = openSync(logFile, 'a');
  // Detached: a control plane shared by several test files outlives the file that started it; whoever
  // holds its pids stops it (test/global-setup.ts).
  const child = spawn(path.join(k8sBinDir(), bin), args, { stdio: ['ignore', fd, fd], detached: true });
  closeSync(fd);
  child.unref();
  return child;
}

const tail = (file: string) => {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '';
  }
};

/** One request to the API server; the body parsed as JSON when it is. */
export function kubeRequest(
  cp: Pick<ControlPlaneInfo, 'url' | 'caCert'>,
  token: string,
  method: string,
  p: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; body: any; text: string }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const r = https.request(
      `${cp.url}${p}`,
      {
        method,
        ca: cp.caCert,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(data !== undefined ? { 'content-type': contentType, 'content-length': Buffer.byteLength(data) } : {}),
        },
        timeout: 15_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // text (logs)
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, text });
        });
        res.on('error', reject);
      },
    );
    r.on('timeout', () => r.destroy(new Error(`${method} ${p}: no answer`)));
    r.on('error', reject);
    r.end(data);
  });
}

export function stopPids(pids: number[]): Promise<void> {
  // Controller-manager and API server before etcd.
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  return (async () => {
    for (const pid of [...pids].reverse()) {
      if (!alive(pid)) continue;
      process.kill(pid, 'SIGTERM');
      for (let i = 0; i < 50 && alive(pid); i++) await sleep(100);
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
  })();
}

/** Starts etcd, the API server and the controller-manager in `dir`; resolves once pods can be created. */
export async function startControlPlane(dir: string, timeoutMs = 90_000): Promise<ControlPlane> {
  await waitForK8sBinaries();
  mkdirSync(dir, { recursive: true });
  const t0 = Date.now();
  makeKeys(dir);
  const adminToken = randomBytes(24).toString('hex');
  writeFileSync(path.join(dir, 'tokens.csv'), `${adminToken},test-admin,test-admin-uid,system:masters\n`);
  const [etcdPort, etcdPeer, apiPort] = [await freePort(), await freePort(), await freePort()];
  const f = (name: string) => path.join(dir, name);
  const pids: number[] = [];
  const children: ChildProcess[] = [];
  const start = (bin: string, args: string[]) => {
    const c = startProcess(bin, args, f(`${bin}.log`));
    children.push(c);
    pids.push(c.pid!);
    return c;
  };
  const etcdUrl = `http://127.0.0.1:${etcdPort}`;
  start('etcd', [
    '--data-dir',
    f('etcd-data'),
    '--listen-client-urls',
    etcdUrl,
    '--advertise-client-urls',
    etcdUrl,
    '--listen-peer-urls',
    `http://127.0.0.1:${etcdPeer}`,
    '--initial-advertise-peer-urls',
    `http://127.0.0.1:${etcdPeer}`,
    '--initial-cluster',
    `default=http://127.0.0.1:${etcdPeer}`,
    '--unsafe-no-fsync',
    '--log-level',
    'warn',
  ]);
  const url = `https://127.0.0.1:${apiPort}`;
  start('kube-apiserver', [
    `--etcd-servers=${etcdUrl}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${apiPort}`,
    `--cert-dir=${f('certs')}`,
    `--tls-cert-file=${f('apiserver.crt')}`,
    `--tls-private-key-file=${f('apiserver.key')}`,
    `--client-ca-file=${f('client-ca-bundle.crt')}`,
    `--service-account-key-file=${f('sa.pub')}`,
    `--service-account-signing-key-file=${f('sa.key')}`,
    '--service-account-issuer=https://kubernetes.default.svc',
    '--api-audiences=https://kubernetes.default.svc',
    '--authorization-mode=RBAC',
    `--token-auth-file=${f('tokens.csv')}`,
    '--service-cluster-ip-range=10.0.0.0/24',
    // The kubelet stand-in listens on 127.0.0.1 with a self-signed certificate (not verified without
    // --kubelet-certificate-authority).
    '--kubelet-preferred-address-types=InternalIP',
    '--endpoint-reconciler-type=none',
    '--enable-priority-and-fairness=false',
    '--profiling=false',
    '--v=0',
  ]);
  const admin = { url, caCert: readFileSync(f('ca.crt'), 'utf8') };
  writeFileSync(
    f('admin.kubeconfig'),
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'test', cluster: { server: url, 'certificate-authority': f('ca.crt') } }],
      users: [{ name: 'admin', user: { token: adminToken } }],
      contexts: [{ name: 'test', context: { cluster: 'test', user: 'admin' } }],
      'current-context': 'test',
    }),
  );
  const stop = () => stopPids(pids);
  try {
    const deadline = Date.now() + timeoutMs;
    const gone = () => children.find((c) => c.exitCode !== null);
    for (;;) {
      const ready = await kubeRequest(admin, adminToken, 'GET', '/readyz').then(
        (r) => r.status === 200,
        () => false,
      );
      if (ready) break;
      const dead = gone();
      if (dead || Date.now() > deadline) {
        const bin = dead ? path.basename(String(dead.spawnfile)) : 'kube-apiserver';
        throw new Error(`${bin} ${dead ? 'exited' : 'not ready in time'}; its log ends:\n${tail(f(`${bin}.log`))}`);
      }
      await sleep(200);
    }
    start('kube-controller-manager', [
      `--kubeconfig=${f('admin.kubeconfig')}`,
      `--authentication-kubeconfig=${f('admin.kubeconfig')}`,
      `--authorization-kubeconfig=${f('admin.kubeconfig')}`,
      '--controllers=serviceaccount,garbagecollector,namespace,root-ca-cert-publisher',
      `--service-account-private-key-file=${f('sa.key')}`,
      `--root-ca-file=${f('ca.crt')}`,
      '--use-service-account-credentials=false',
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      '--secure-port=0',
      '--concurrent-gc-syncs=5',
      '--v=0',
    ]);
    // The default namespace's account: the sign that the controllers run.
    for (;;) {
      const r = await kubeRequest(admin, adminToken, 'GET', '/api/v1/namespaces/default/serviceaccounts/default').catch(
        () => undefined,
      );
      if (r?.status === 200) break;
      const dead = gone();
      if (dead || Date.now() > deadline)
        throw new Error(
          `kube-controller-manager ${dead ? 'exited' : 'made no service account in time'}; its log ends:\n${tail(f('kube-controller-manager.log'))}`,
        );
      await sleep(200);
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return { ...admin, adminToken, dir, pids, startMs: Date.now() - t0, stop };
}

/** Waits until the namespace's `default` service account exists (the controller makes it). */
export async function createNamespace(cp: ControlPlaneInfo, name: string): Promise<void> {
  const r = await kubeRequest(cp, cp.adminToken, 'POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name },
  });
  if (r.status !== 201 && r.status !== 409) throw new Error(`create namespace ${name}: ${r.status} ${r.text}`);
  for (let i = 0; i < 150; i++) {
    const sa = await kubeRequest(cp, cp.adminToken, 'GET', `/api/v1/namespaces/${name}/serviceaccounts/default`);
    if (sa.status === 200) return;
    await sleep(100);
  }
  throw new Error(`namespace ${name}: no default service account`);
}

/** A service account's token by TokenRequest, as a pod's projected token or a deployment's would be. */
export async function serviceAccountToken(
  cp: ControlPlaneInfo,
  namespace: string,
  name: string,
  boundPod?: { name: string; uid: string },
): Promise<string> {
  const r = await kubeRequest(
    cp,
    cp.adminToken,
    'POST',
    `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: {
        audiences: ['https://kubernetes.default.svc'],
        expirationSeconds: 24 * 3600,
        ...(boundPod ? { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', ...boundPod } } : {}),
      },
    },
  );
  if (r.status !== 201) throw new Error(`token of ${namespace}/${name}: ${r.status} ${r.text}`);
  return r.body.status.token as string;
}

export { ROOT as REPO_ROOT };
