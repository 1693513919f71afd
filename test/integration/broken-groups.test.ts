// Groups whose drivers cannot start, on the real stack and k8s adapter: pods that end before their runner
// is ready (the real kube-apiserver of testkit/kube, whose kubelet stand-in ends each container with exit code
// 1 shortly after it starts), and a cluster on a port nothing listens on. Replacements
// back off, stop after CRASH_LOOP_LIMIT with the cause on the group, resume on rescale; an execution
// with no ready instance answers 409 with the reason within EXECUTE_WAIT_MS, a submission ends failed.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { installChartRbac, helmAvailable } from '../../testkit/kube/chart-rbac';
import { k8sAvailable } from '../../testkit/kube/control-plane';
import { startKubelet, type Kubelet } from '../../testkit/kube/kubelet';
import { K8S_SETUP_TIMEOUT_MS, sharedControlPlane } from '../../testkit/kube/shared';
import type { MotoServer } from '../../testkit/moto';
import { call, eventually, form, startHarness, type Harness } from '../harness';
import { createK8sCluster, freePort, startStorage } from './broken-fixture';

const EXECUTE_WAIT_MS = 3000;
let h: Harness;
let kubelet: Kubelet | undefined;
const real = k8sAvailable() && helmAvailable();
let closedPort: number;
let storage: MotoServer;

beforeAll(async () => {
  closedPort = await freePort();
  // pip of the local adapter asks an index nobody serves (no registry is contacted) and does not retry:
  // every requirement is "not found" at once, as a misspelt package would be.
  process.env.PIP_INDEX_URL = `http://127.0.0.1:${await freePort()}/simple`;
  process.env.PIP_RETRIES = '0';
  storage = await startStorage();
  let namespace = 'default';
  let crashing: Record<string, string> | undefined;
  if (real) {
    const cp = await sharedControlPlane(inject('testDir'));
    const release = await installChartRbac(cp, 'crashing', 'crashing-rel');
    namespace = release.driverNamespace;
    crashing = { url: cp.url, token: release.token, caCert: cp.caCert };
    // Every container ends with exit code 1 100 ms after it starts: a runner that never gets to signal READY.
    kubelet = await startKubelet({
      cp,
      nodeName: 'node-crashing',
      namespaces: [namespace],
      dir: `${inject('testDir')}/kubelet-crashing`,
      plan: () => ({ hold: ['runner starting'], exitAfterMs: 100, exitCode: 1 }),
    });
  }
  h = await startHarness({
    env: {
      // Long enough for a local venv and pip to fail by themselves on a loaded machine: the failures this
      // file looks at are the drivers' own, not the deadline's.
      LAUNCH_DEADLINE_MS: '30000',
      EXECUTE_WAIT_MS: String(EXECUTE_WAIT_MS),
      CRASH_LOOP_LIMIT: '3',
      CRASH_BACKOFF_MS: '1500',
      CRASH_BACKOFF_MAX_MS: '5000',
      K8S_NAMESPACE: namespace,
    },
  });
  if (crashing) {
    const { url, ...credentials } = crashing;
    expect((await createK8sCluster(h, 'crashing', url, storage, credentials)).status).toBe(200);
  }
  expect((await createK8sCluster(h, 'closed', `http://127.0.0.1:${closedPort}`, storage)).status).toBe(200);
}, K8S_SETUP_TIMEOUT_MS);
afterAll(async () => {
  await h?.stop();
  await storage?.stop();
  await kubelet?.stop();
});

const createGroup = async (name: string, clusterName: string, extra: Record<string, string> = {}) => {
  const r = await call(
    h,
    'POST',
    '/group',
    form({ name, kind: 'CODE', language: 'PYTHON', scale: '1', clusterName, ...extra }),
  );
  expect(r.status).toBe(200);
  return r.body.groupId as string;
};
const group = async (id: string) =>
  (await call(h, 'GET', `/group/${id}?jobStates=SUBMITTED,STARTING,READY,BUSY,FAILED,FINISHED,UNKNOWN`)).body;
type Instance = { jobId: string; state: string; submitTime: number; error?: string };
const instances = async (id: string): Promise<Instance[]> =>
  ((await group(id)).jobs as Instance[]).sort((a, b) => a.submitTime - b.submitTime);

describe.skipIf(!real)('a group whose drivers fail before READY', () => {
  it('backs off between replacements, stops after the limit with the cause, and resumes on rescale', async () => {
    const id = await createGroup('crashing', 'crashing');
    const g = await eventually(async () => {
      const d = await group(id);
      return d.error ? d : undefined;
    }, 60_000);
    expect(g.error).toMatch(/stopped replacing drivers after 3 consecutive failures before READY; last: .+/);
    const first = await instances(id);
    expect(first).toHaveLength(3);
    expect(first.every((i) => i.state === 'FAILED')).toBe(true);
    // Launch times: each replacement waited at least the backoff, 1.5 s then 3 s.
    const gaps = first.slice(1).map((i, n) => i.submitTime - first[n].submitTime);
    expect(gaps[0]).toBeGreaterThanOrEqual(1500);
    expect(gaps[1]).toBeGreaterThanOrEqual(3000);
    // Given up: no fourth driver comes.
    await new Promise((r) => setTimeout(r, 6000));
    expect(await instances(id)).toHaveLength(3);

    // An execution finds no ready instance: 409 within the wait, naming the group's trouble.
    const t0 = Date.now();
    const ex = await call(h, 'POST', `/group/${id}/job/execute`, { type: 'interactive_code_execute', code: '1' });
    expect(ex.status).toBe(409);
    expect(Date.now() - t0).toBeLessThan(EXECUTE_WAIT_MS + 10_000);
    expect(ex.body.message).toMatch(/^no ready instance took the execution within 3 s \(EXECUTE_WAIT_MS\)/);
    expect(ex.body.message).toContain('stopped replacing drivers');

    // A rescale starts over: the error goes, a new driver is launched.
    expect((await call(h, 'POST', `/group/${id}/rescale/1`)).status).toBe(200);
    const after = await eventually(async () => {
      const d = await group(id);
      return d.error === undefined && (d.jobs as Instance[]).length > 3 ? d : undefined;
    }, 30_000);
    expect(after.error).toBeUndefined();
  });
});

describe('a group on a cluster nobody answers for', () => {
  it('shows its instance UNKNOWN with the cause; executions answer 409, submissions end failed', async () => {
    const id = await createGroup('unreachable', 'closed');
    const [inst] = await eventually(async () => {
      const l = await instances(id);
      return l.length && l[0].state === 'UNKNOWN' ? l : undefined;
    }, 20_000);
    expect(inst.error).toContain(`127.0.0.1:${closedPort}`);
    expect(inst.error).toMatch(/cluster unreachable since/);

    const ex = await call(h, 'POST', `/group/${id}/job/execute`, { type: 'interactive_code_execute', code: '1' });
    expect(ex.status).toBe(409);
    expect(ex.body.message).toMatch(/no ready instance/);

    const sub = await call(h, 'POST', `/group/${id}/job/submit`, { type: 'interactive_code_execute', code: '1' });
    expect(sub.status).toBe(200);
    const result = await eventually(async () => {
      const r = await call(h, 'GET', `/group/${id}/job/result?size=10`);
      const found = (r.body.content ?? []).find(
        (x: { jobInstanceId: string }) => x.jobInstanceId === sub.body.jobInstanceId,
      );
      return found?.endTime ? found : undefined;
    }, 20_000);
    expect(result.error.message).toMatch(/^no ready instance/);
    // The launch deadline (30 s) passes: the instance fails, the group replaces it (with backoff).
    await eventually(async () => (await instances(id)).some((i) => i.state === 'FAILED'), 60_000);
  });
});

describe('a PYTHON group on a local cluster whose pyRequirements cannot be installed', () => {
  it('does not replace its failing driver again and again: it backs off and stops after the limit', async () => {
    const id = await createGroup('misspelt', 'default', { pyRequirements: 'numpyy' });
    const g = await eventually(async () => {
      const d = await group(id);
      return d.error ? d : undefined;
    }, 90_000);
    // Each launch fails: pip finds no such package.
    expect(g.error).toMatch(
      /stopped replacing drivers after 3 consecutive failures before READY; last: launch failed: /,
    );
    const list = await instances(id);
    expect(list).toHaveLength(3);
    expect(list.every((i) => i.state === 'FAILED' && i.error?.startsWith('launch failed: '))).toBe(true);
    expect(list.some((i) => i.error?.includes('pip install numpyy failed'))).toBe(true);
    expect(list[2].submitTime - list[1].submitTime).toBeGreaterThanOrEqual(3000);
    await new Promise((r) => setTimeout(r, 5000));
    expect(await instances(id)).toHaveLength(3);
  });
});
