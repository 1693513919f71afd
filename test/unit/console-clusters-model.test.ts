// The console's cluster form model (console/src/pages/clusters-model.ts) against the API's own rules: the
// bodies it builds pass the API's request schemas, an edit that retypes no secret keeps every stored one
// (through lib/cluster-secrets.ts as the API applies it), "remove" clears one, and the API's validation
// message splits by field. Also the overview's bucket and latency arithmetic (pages/overview-math.ts).
import { describe, expect, it } from 'vitest';
import { clusterTypeInfo } from '../../activities/adapters/cluster-types';
import { ClusterCreate, ClusterUpdate } from '../../api/clusters/schemas';
import { toCluster, type ClusterDoc } from '../../api/clusters/service';
import {
  fieldErrors,
  newStorage,
  toBody as toBodyOf,
  toValues,
  type ClusterTypeInfo,
  type ClusterValues,
} from '../../console/src/pages/clusters-model';
import { HOUR, jobBuckets, latencies } from '../../console/src/pages/overview-math';
import { sealClusterSecrets, unsealClusterSecrets } from '../../lib/cluster-secrets';
import type { Job, JobInstanceResult } from '../../domain/resources';

const KEY = 'ab'.repeat(32);
/** The types as GET /cluster/types answers (what the console's form reads). */
const TYPES: ClusterTypeInfo[] = clusterTypeInfo();
const toBody = (v: ClusterValues, editing: boolean) =>
  toBodyOf(
    v,
    editing,
    TYPES.find((t) => t.type === v.type)!,
  );

function newK8sValues() {
  const v = toValues();
  v.name = 'prod';
  v.url = 'https://k8s.example.com:6443';
  v.secrets.token = { stored: false, value: 'the-token', remove: false };
  v.secrets.password = { stored: false, value: 'the-password', remove: false };
  v.storages = [
    {
      ...newStorage('s3'),
      sparkBucket: 'spark',
      extraBuckets: 'a, b',
      accessKey: { stored: false, value: 'AK', remove: false },
    },
  ];
  v.quota.limitsCpu = '16';
  v.memory.driverMemory = '2g';
  return v;
}

describe('the cluster form model', () => {
  it('builds a create body the API accepts, leaving empty fields out', () => {
    const body = toBody(newK8sValues(), false);
    const parsed = ClusterCreate.safeParse(body);
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    expect(body).toEqual({
      name: 'prod',
      type: 'k8s',
      url: 'https://k8s.example.com:6443',
      sparkStorage: 's3',
      token: 'the-token',
      password: 'the-password',
      storages: { s3: { type: 's3', sparkBucket: 'spark', extraBuckets: ['a', 'b'], accessKey: 'AK' } },
      memorySettings: { driverMemory: '2g', dynamicAllocation: 'false' },
      resourceQuota: { limitsCpu: '16' },
    });
  });

  it('edits without retyping secrets: every stored secret stays, and none is in the form', () => {
    const stored = {
      _id: 'c1',
      id: 'c1',
      createdTime: 1,
      ...sealClusterSecrets(KEY, { ...toBody(newK8sValues(), false), url: 'https://k8s.example.com:6443' }),
    } as unknown as ClusterDoc;
    const values = toValues(toCluster(stored, 2));
    expect(JSON.stringify(values)).not.toMatch(/the-token|the-password|"AK"/);
    expect(values.secrets.token).toEqual({ stored: true, value: '', remove: false });
    values.description = 'edited';
    const body = toBody(values, true);
    expect(ClusterUpdate.safeParse(body).success).toBe(true);
    expect(body).not.toHaveProperty('token');
    expect(body.storages).toEqual({
      s3: { type: 's3', sparkBucket: 'spark', extraBuckets: ['a', 'b'], accessKey: '******' },
    });
    // What the API stores from it (api/clusters/service.ts: the given fields over the stored ones).
    const merged = unsealClusterSecrets(KEY, { ...stored, ...sealClusterSecrets(KEY, body, stored) });
    expect(merged).toMatchObject({ token: 'the-token', password: 'the-password', description: 'edited' });
    expect((merged.storages as Record<string, { accessKey?: string }>).s3.accessKey).toBe('AK');
  });

  it('replaces a secret that is typed and clears one marked for removal', () => {
    const stored = {
      _id: 'c1',
      id: 'c1',
      createdTime: 1,
      ...sealClusterSecrets(KEY, toBody(newK8sValues(), false)),
    } as unknown as ClusterDoc;
    const values = toValues(toCluster(stored, 2));
    values.secrets.token.value = 'new-token';
    values.secrets.password.remove = true;
    values.storages[0].accessKey.remove = true;
    const body = toBody(values, true);
    expect(body).toMatchObject({ token: 'new-token', password: '' });
    const merged = unsealClusterSecrets(KEY, { ...stored, ...sealClusterSecrets(KEY, body, stored) });
    expect(merged.token).toBe('new-token');
    expect(merged.password).toBeUndefined();
    expect((merged.storages as Record<string, { accessKey?: string }>).s3.accessKey).toBeUndefined();
  });

  it("sends a k8s cluster's namespace and Spark image, and '' (the service default) when cleared in an edit", () => {
    const v = newK8sValues();
    v.settings.namespace = 'team-b';
    v.settings.sparkImage = 'registry.example:5000/team/spark:3.5.7';
    const body = toBody(v, false);
    expect(body).toMatchObject({ namespace: 'team-b', sparkImage: 'registry.example:5000/team/spark:3.5.7' });
    expect(ClusterCreate.safeParse(body).success).toBe(true);
    const stored = { _id: 'c1', id: 'c1', createdTime: 1, ...sealClusterSecrets(KEY, body) } as unknown as ClusterDoc;
    const values = toValues(toCluster(stored, 2));
    expect(values.settings).toMatchObject({
      namespace: 'team-b',
      sparkImage: 'registry.example:5000/team/spark:3.5.7',
    });
    values.settings.namespace = '';
    values.settings.sparkImage = '';
    const cleared = toBody(values, true);
    expect(cleared).toMatchObject({ namespace: '', sparkImage: '' });
    expect(ClusterUpdate.safeParse(cleared).success).toBe(true);
    // A cleared field reads as unset (the service's default), not as ''.
    const shown = toCluster({ ...stored, namespace: '', sparkImage: '' } as ClusterDoc, 2);
    expect(shown).not.toHaveProperty('namespace');
    expect(shown).not.toHaveProperty('sparkImage');
    // A new cluster leaves them out when empty; a local one never sends them.
    expect(toBody(newK8sValues(), false)).not.toHaveProperty('namespace');
    const local = { ...v, type: 'local' as const };
    expect(toBody(local, false)).not.toHaveProperty('sparkImage');
    expect(ClusterCreate.safeParse({ name: 'l', type: 'local', namespace: 'team-b' }).success).toBe(false);
    expect(ClusterUpdate.safeParse({ namespace: 'Team_B' }).success).toBe(false);
  });

  it("builds a yarn cluster's body from the settings GET /cluster/types lists: hadoopConf from key=value lines", () => {
    const v = toValues();
    v.name = 'hadoop';
    v.type = 'yarn';
    v.url = 'http://rm.example.com:8088';
    v.settings.queue = 'analytics';
    v.settings.hadoopConf =
      'fs.defaultFS=hdfs://nn.example.com:8020\n\nyarn.resourcemanager.scheduler.address = rm.example.com:8030';
    // Another type's settings the form held stay out.
    v.settings.namespace = 'team-b';
    const body = toBody(v, false);
    expect(body).toEqual({
      name: 'hadoop',
      type: 'yarn',
      url: 'http://rm.example.com:8088',
      sparkStorage: 's3',
      queue: 'analytics',
      hadoopConf: {
        'fs.defaultFS': 'hdfs://nn.example.com:8020',
        'yarn.resourcemanager.scheduler.address': 'rm.example.com:8030',
      },
    });
    expect(ClusterCreate.safeParse(body).success).toBe(true);
    const stored = { _id: 'c2', id: 'c2', createdTime: 1, ...body } as unknown as ClusterDoc;
    const values = toValues(toCluster(stored, 2));
    expect(values.url).toBe('http://rm.example.com:8088');
    expect(values.settings.hadoopConf).toBe(
      'fs.defaultFS=hdfs://nn.example.com:8020\nyarn.resourcemanager.scheduler.address=rm.example.com:8030',
    );
    // Cleared in an edit: an empty map and '' (the defaults again), which the API takes.
    values.settings.hadoopConf = '';
    values.settings.queue = '';
    const cleared = toBody(values, true);
    expect(cleared).toMatchObject({ hadoopConf: {}, queue: '' });
    expect(ClusterUpdate.safeParse(cleared).success).toBe(true);
    // A local cluster: no url (the type sets it), its threads a number.
    const local = { ...toValues(), name: 'l', type: 'local' as const, url: 'ignored' };
    local.settings.threads = '3';
    expect(toBody(local, false)).toEqual({ name: 'l', type: 'local', sparkStorage: 's3', threads: 3 });
  });

  it('splits the API validation message by field', () => {
    const errors = fieldErrors(
      "url: is required for a k8s cluster (the API server URL); resourceQuota.limitsCpu: 'x' is not a Kubernetes quantity; a cluster is broken",
    );
    expect(errors.get('url')).toBe('is required for a k8s cluster (the API server URL)');
    expect(errors.get('resourceQuota.limitsCpu')).toBe("'x' is not a Kubernetes quantity");
    expect(errors.get('')).toBe('a cluster is broken');
  });
});

describe('the overview arithmetic', () => {
  const now = Date.UTC(2026, 0, 2, 12, 30);
  const job = (submitTime: number, state: string, endTime?: number) =>
    ({ jobId: `${submitTime}-${state}`, submitTime, state, endTime }) as unknown as Job;

  it('counts submissions and outcomes per hour of the last 24 hours', () => {
    const buckets = jobBuckets(
      [
        job(now - 10 * 60_000, 'FINISHED', now - 5 * 60_000),
        job(now - 2 * HOUR, 'FAILED', now - 2 * HOUR + 1000),
        job(now - 30 * HOUR, 'CANCELED', now - HOUR),
        job(now - 30 * HOUR, 'FINISHED', now - 30 * HOUR + 1000),
      ],
      now,
    );
    expect(buckets).toHaveLength(24);
    const last = buckets[23];
    expect(last.start).toBe(Date.UTC(2026, 0, 2, 12));
    expect(last.values).toEqual([1, 1, 0, 0]);
    expect(buckets[21].values).toEqual([1, 0, 1, 0]);
    expect(buckets[22].values).toEqual([0, 0, 0, 1]);
    const all = buckets.reduce((s, b) => s.map((x, i) => x + b.values[i]), [0, 0, 0, 0]);
    expect(all).toEqual([2, 1, 1, 1]);
  });

  it('takes the latest completed executions, oldest first', () => {
    const r = (i: number, start: number, end?: number) =>
      ({ jobInstanceId: `r${i}`, groupId: 'g', startTime: start, endTime: end, jobConfig: {} }) as JobInstanceResult;
    const out = latencies([r(1, 1000, 1500), r(2, 500, 700), r(3, 2000), r(4, 3000, 3100)], 2);
    expect(out).toEqual([
      { endTime: 1500, ms: 500 },
      { endTime: 3100, ms: 100 },
    ]);
  });
});
