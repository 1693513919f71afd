// The rules of k8s drivers one piece at a time: Spark's memory overhead factors and CPU limits, the
// reasons a pending pod shows, which refusals of the API server are permanent, a runner's Temporal
// address, Kubernetes' expansion of container args, and the cluster fields behind them.
import { ApiException } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { apiErrors, K8sApiError } from '../../activities/adapters/k8s/errors';
import { buildDriverManifests } from '../../activities/adapters/k8s/manifests';
import type { K8sCluster } from '../../activities/adapters/k8s/options';
import { driverResources } from '../../activities/adapters/k8s/resources';
import { podStatus } from '../../activities/adapters/k8s/status';
import { ClusterCreate } from '../../api/clusters/schemas';
import { toCluster, type ClusterDoc } from '../../api/clusters/service';
import type { DriverSpec } from '../../domain/driver';
import { MASK, sealClusterSecrets, unsealClusterSecrets } from '../../lib/cluster-secrets';
import { expandK8s } from '../../testkit/pod-runner';
import { sparkSpec } from '../../testkit/spark-spec';

const config = { K8S_SPARK_IMAGE: 'apache/spark:3.5.7', K8S_NAMESPACE: 'jobs', ARTIFACT_DIR: '/srv/a' };
const cluster: K8sCluster = { name: 'c', url: 'https://k8s.example.com' };

function spec(over: Partial<DriverSpec> = {}): DriverSpec {
  return {
    driverId: 'inst-1',
    role: 'runner',
    env: { TEMPORAL_ADDRESS: '127.0.0.1:7233' },
    labels: {},
    spark: sparkSpec({ name: 'g', clusterName: 'c' }),
    ...over,
  };
}

describe('memory overhead and CPU, as Spark sizes a driver pod', () => {
  it('0.1 for JVM drivers, 0.4 for Python ones, at least 384 MiB, floored like Spark', () => {
    expect(driverResources({ 'spark.driver.memory': '8g' }).limits).toEqual({ memory: `${8192 + 819}Mi` });
    expect(driverResources({ 'spark.driver.memory': '8g' }, true).limits).toEqual({ memory: `${8192 + 3276}Mi` });
    expect(driverResources({ 'spark.driver.memory': '512m' }, true).limits).toEqual({ memory: `${512 + 384}Mi` });
  });

  it('spark.driver.memoryOverheadFactor wins over spark.kubernetes.memoryOverheadFactor, an explicit overhead over both', () => {
    const two = { 'spark.driver.memory': '2g' };
    expect(driverResources({ ...two, 'spark.kubernetes.memoryOverheadFactor': '0.25' }, true).limits?.memory).toBe(
      `${2048 + 512}Mi`,
    );
    expect(
      driverResources(
        { ...two, 'spark.kubernetes.memoryOverheadFactor': '0.25', 'spark.driver.memoryOverheadFactor': '0.5' },
        true,
      ).limits?.memory,
    ).toBe(`${2048 + 1024}Mi`);
    expect(
      driverResources({ ...two, 'spark.driver.memoryOverheadFactor': '0.5', 'spark.driver.memoryOverhead': '100m' })
        .limits?.memory,
    ).toBe(`${2048 + 100}Mi`);
    expect(() => driverResources({ 'spark.driver.memoryOverheadFactor': '-1' })).toThrow(/not a positive number/);
  });

  it('requests cores; limits them only when asked', () => {
    expect(driverResources({ 'spark.driver.cores': '3' })).toEqual({
      requests: { cpu: '3', memory: '1408Mi' },
      limits: { memory: '1408Mi' },
    });
    expect(
      driverResources({ 'spark.kubernetes.driver.request.cores': '500m', 'spark.kubernetes.driver.limit.cores': '2' }),
    ).toEqual({ requests: { cpu: '500m', memory: '1408Mi' }, limits: { cpu: '2', memory: '1408Mi' } });
  });
});

describe('pending pods, with their reasons', () => {
  const created = '2026-01-01T00:00:00Z';
  const t0 = Date.parse(created);
  const pending = (status: object) =>
    ({ metadata: { name: 'p', creationTimestamp: created }, status: { phase: 'Pending', ...status } }) as never;
  const waiting = (reason: string) =>
    pending({ containerStatuses: [{ name: 'spark-driver', state: { waiting: { reason, message: 'why' } } }] });

  it('not scheduled: PENDING with the scheduler’s reason and message', () => {
    const pod = pending({
      conditions: [
        { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available' },
      ],
    });
    expect(podStatus(pod)).toEqual({ phase: 'PENDING', message: 'Unschedulable: 0/3 nodes are available' });
  });

  it('image pull errors are PENDING within the grace time, FAILED after it; a malformed image at once', () => {
    for (const reason of ['ErrImagePull', 'ImagePullBackOff', 'CreateContainerConfigError']) {
      expect(podStatus(waiting(reason), { now: t0 + 59_000, imagePullGraceMs: 60_000 })).toEqual({
        phase: 'PENDING',
        message: `${reason}: why`,
      });
      expect(podStatus(waiting(reason), { now: t0 + 61_000, imagePullGraceMs: 60_000 })).toEqual({
        phase: 'FAILED',
        message: `${reason}: why (for more than 60 s)`,
      });
    }
    for (const reason of ['InvalidImageName', 'ErrImageNeverPull'])
      expect(podStatus(waiting(reason), { now: t0 })).toEqual({ phase: 'FAILED', message: `${reason}: why` });
    expect(podStatus(waiting('ContainerCreating'), { now: t0 + 3_600_000 })).toEqual({ phase: 'PENDING' });
  });
});

describe('refusals of the API server', () => {
  const { fail, describe: words } = apiErrors('k8s:6443', (m) => m.replaceAll('s3cret', '***'));
  const refused = (code: number, reason: string, message: string) =>
    new ApiException(code, 'refused', JSON.stringify({ kind: 'Status', reason, message, code }), {});

  it.each([
    [400, 'BadRequest'],
    [401, 'Unauthorized'],
    [403, 'Forbidden'],
    [422, 'Invalid'],
  ])('a create refused with %i is permanent, in the server’s words', (code, reason) => {
    const e = fail(refused(code, reason, 'pods is forbidden: token s3cret'), 'create pod p');
    expect(e).toBeInstanceOf(ApplicationFailure);
    expect(e).toMatchObject({ type: 'InvalidSpec', nonRetryable: true });
    expect(e.message).toBe(
      `Kubernetes API (k8s:6443) create pod p: HTTP ${code} ${reason}: pods is forbidden: token ***`,
    );
  });

  it('anything else is retried', () => {
    for (const code of [409, 429, 500, 503])
      expect(fail(refused(code, 'X', 'busy'), 'create pod p')).toBeInstanceOf(K8sApiError);
    expect(words(refused(403, 'Forbidden', 'no'), 'read pod p')).toBeInstanceOf(K8sApiError);
  });
});

describe('a runner’s Temporal address inside a pod', () => {
  const env = (m: ReturnType<typeof buildDriverManifests>) => m.pod.spec!.containers[0].env!;

  it('the cluster’s temporalAddress, else the worker’s unless that is loopback', () => {
    const withAddress = buildDriverManifests(spec(), {
      cluster: { ...cluster, temporalAddress: 'temporal.infra:7233' },
      config,
    });
    expect(env(withAddress)).toContainEqual({ name: 'TEMPORAL_ADDRESS', value: 'temporal.infra:7233' });
    for (const loop of ['127.0.0.1:7233', 'localhost:7233', '[::1]:7233', '0.0.0.0:7233'])
      expect(() => buildDriverManifests(spec({ env: { TEMPORAL_ADDRESS: loop } }), { cluster, config })).toThrow(
        /has no temporalAddress/,
      );
    const reachable = buildDriverManifests(spec({ env: { TEMPORAL_ADDRESS: 'temporal.prod:7233' } }), {
      cluster,
      config,
    });
    expect(env(reachable)).toContainEqual({ name: 'TEMPORAL_ADDRESS', value: 'temporal.prod:7233' });
    // Applications are not runners: their env passes as it is.
    const app = spec({ role: 'application', env: { TEMPORAL_ADDRESS: '127.0.0.1:1' } });
    app.spark.artifacts.pyFiles = ['https://r/main.py'];
    expect(env(buildDriverManifests(app, { cluster, config }))).toContainEqual({
      name: 'TEMPORAL_ADDRESS',
      value: '127.0.0.1:1',
    });
  });
});

describe('Kubernetes’ expansion of container args (the local kubelet)', () => {
  it('expands $(VAR) of defined variables, unescapes $$, leaves the rest', () => {
    const env = { A: 'x', B: 'y' };
    expect(expandK8s('$(A)-$(B)-$(C)', env)).toBe('x-y-$(C)');
    expect(expandK8s('$$(A) costs $$5', env)).toBe('$(A) costs $5');
  });
});

describe('cluster fields for k8s', () => {
  const KEY = 'ab'.repeat(32);
  it('token is a secret: sealed at rest, masked in responses; temporalAddress is host:port', () => {
    const body = ClusterCreate.parse({
      name: 'k',
      url: 'https://k8s:6443',
      token: 'tok-123456',
      temporalAddress: 'temporal.svc:7233',
    });
    const sealed = sealClusterSecrets(KEY, body);
    expect(sealed.token).not.toBe('tok-123456');
    expect(unsealClusterSecrets(KEY, sealed).token).toBe('tok-123456');
    const shown = toCluster({ ...sealed, _id: '1', id: '1', createdTime: 1 } as unknown as ClusterDoc, 2);
    expect(shown).toMatchObject({ token: MASK, temporalAddress: 'temporal.svc:7233' });
    const bad = ClusterCreate.safeParse({ name: 'k', url: 'https://k8s', temporalAddress: 'http://temporal:7233' });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]).toMatchObject({
      path: ['temporalAddress'],
      message: expect.stringMatching(/host:port/),
    });
  });
});
