import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startHarness, type Harness } from '../harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ worker: false });
});
afterAll(async () => h?.stop());

// A real client key, encrypted with the passphrase (a key the passphrase does not decrypt is refused).
const KEY = generateKeyPairSync('ec', {
  namedCurve: 'prime256v1',
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'p4ssphrase' },
}).privateKey;
/** What no answer may carry: a line of the key's PEM (JSON escapes its line breaks), the passphrase, ... */
const SECRETS = [KEY.split('\n')[1], 'p4ssphrase', 'hunter2-password', 'AKIA-ACCESS', 'aws-secret-value'];
const k8s = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  type: 'k8s',
  url: 'https://k8s.example.com:6443',
  description: `cluster ${name}`,
  caCert: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----',
  clientCert: '-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----',
  clientKey: KEY,
  clientKeyAlgorithm: 'RSA',
  clientKeyPassphrase: SECRETS[1],
  username: 'admin',
  password: SECRETS[2],
  sparkStorage: 'main',
  metastoreName: 'hive',
  defaultApplicationConfig: 'spark.eventLog.enabled=true',
  storages: {
    main: {
      sparkBucket: 'spark',
      dataBucket: 'data',
      extraBuckets: ['x1', 'x2'],
      type: 's3',
      endpoint: 'https://s3.example.com',
      region: 'eu-west-1',
      accessKey: SECRETS[3],
      secretKey: SECRETS[4],
    },
  },
  memorySettings: {
    executors: '2',
    driverMemory: '1g',
    executorMemory: '2g',
    dynamicAllocation: 'true',
    minExecutors: '1',
    maxExecutors: '4',
  },
  resourceQuota: { limitsPod: '10', limitsCpu: '8', limitsMemory: '16Gi', requestsCpu: '4', requestsMemory: '8Gi' },
  limitRange: {
    cpuLimitRange: {
      defaultLimit: '1',
      defaultRequest: '500m',
      minRequest: '100m',
      maxLimit: '4',
      maxLimitRequestRatio: '2',
    },
    memoryLimitRange: {
      defaultLimit: '1Gi',
      defaultRequest: '512Mi',
      minRequest: '128Mi',
      maxLimit: '8Gi',
      maxLimitRequestRatio: '2',
    },
  },
  ...extra,
});

const noSecrets = (body: unknown) => {
  const text = JSON.stringify(body);
  for (const s of SECRETS) expect(text).not.toContain(s);
};

describe('clusters over HTTP against real MongoDB', () => {
  it('has the default local cluster from the first start', async () => {
    const r = await call(h, 'GET', '/cluster/default');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      id: 'default',
      name: 'default',
      type: 'local',
      sparkMaster: expect.stringMatching(/^local\[\d+\]$/),
    });
  });

  it('creates a k8s cluster with every field and returns it without secrets', async () => {
    const c = await call(h, 'POST', '/cluster', k8s('prod'));
    expect(c.status).toBe(200);
    expect(c.body.clusterId).toEqual(expect.any(String));
    noSecrets(c.body);
    const g = await call(h, 'GET', `/cluster/${c.body.clusterId}`);
    expect(g.status).toBe(200);
    noSecrets(g.body);
    expect(g.body).toMatchObject({
      id: c.body.clusterId,
      name: 'prod',
      type: 'k8s',
      url: 'https://k8s.example.com:6443',
      sparkMaster: 'k8s://https://k8s.example.com:6443',
      sparkDeployMode: 'cluster',
      sparkStorage: 'main',
      metastoreName: 'hive',
      clientKey: '******',
      clientKeyPassphrase: '******',
      password: '******',
      username: 'admin',
      clientKeyAlgorithm: 'RSA',
      memorySettings: {
        executors: 2,
        driverMemory: '1g',
        executorMemory: '2g',
        dynamicAllocation: true,
        minExecutors: 1,
        maxExecutors: 4,
      },
      resourceQuota: { limitsPod: '10', limitsMemory: '16Gi' },
      limitRange: { cpuLimitRange: { defaultRequest: '500m' } },
    });
    expect(g.body.storages.main).toMatchObject({
      sparkBucket: 'spark',
      extraBuckets: ['x1', 'x2'],
      region: 'eu-west-1',
      accessKey: '******',
      secretKey: '******',
    });
    // Stored encrypted, not in clear.
    const raw = await h.store.col('clusters').findOne({ _id: c.body.clusterId } as never);
    noSecrets(raw);
    expect(String(raw?.password)).toMatch(/^enc:v1:/);
    const list = await call(h, 'GET', '/cluster?size=100');
    noSecrets(list.body);
  });

  it('rejects a duplicate name with 409', async () => {
    expect((await call(h, 'POST', '/cluster', k8s('dup'))).status).toBe(200);
    const r = await call(h, 'POST', '/cluster', k8s('dup'));
    expect(r.status).toBe(409);
    expect(r.body.message).toMatch(/dup.*already exists/);
  });

  it.each([
    [{ name: '' }, /name/],
    [{ url: undefined }, /url: is required/],
    [{ url: 'not a url' }, /url/],
    [{ type: 'mesos' }, /type/],
    [{ memorySettings: { driverMemory: '1gb' } }, /driverMemory/],
    [{ memorySettings: { executors: '-1' } }, /executors/],
    [{ memorySettings: { dynamicAllocation: 'yes' } }, /dynamicAllocation/],
    [{ resourceQuota: { limitsCpu: 'lots' } }, /limitsCpu/],
    [{ limitRange: { memoryLimitRange: { maxLimit: '1 GB' } } }, /maxLimit/],
    [{ storages: { main: { endpoint: 'nope' } } }, /endpoint/],
    [{ storages: { main: { type: 'gcs' } } }, /type/],
    [{ unknownField: 1 }, /unknownField|unrecognized/i],
    [{ id: 'mine' }, /id|unrecognized/i],
  ])('answers 409 for invalid field %j', async (patch, message) => {
    const body = { ...k8s(`bad-${Math.random().toString(36).slice(2, 8)}`), ...patch };
    const r = await call(h, 'POST', '/cluster', JSON.parse(JSON.stringify(body)));
    expect(r.status).toBe(409);
    expect(r.body.message).toMatch(message);
  });

  it('answers 400 for malformed JSON or the wrong content type', async () => {
    const bad = await call(h, 'POST', '/cluster', '{"name": ', { 'content-type': 'application/json' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toEqual(expect.any(String));
    const text = await call(h, 'POST', '/cluster', 'name=x', { 'content-type': 'text/plain' });
    expect(text.status).toBe(400);
    const arr = await call(h, 'POST', '/cluster', [1, 2]);
    expect(arr.status).toBe(400);
  });

  it('creates a local cluster without url', async () => {
    const r = await call(h, 'POST', '/cluster', { name: 'laptop', type: 'local' });
    expect(r.status).toBe(200);
    const g = await call(h, 'GET', `/cluster/${r.body.clusterId}`);
    expect(g.body).toMatchObject({ type: 'local', url: 'local', sparkDeployMode: 'client', sparkStorage: 's3' });
  });

  it('updates a cluster, keeps masked secrets, and refuses a taken name', async () => {
    const { body } = await call(h, 'POST', '/cluster', k8s('to-update'));
    const id = body.clusterId;
    const got = (await call(h, 'GET', `/cluster/${id}`)).body;
    // Sending back what GET returned (masked secrets included) changes nothing secret.
    const { id: _id, sparkMaster: _m, sparkDeployMode: _d, createdTime: _c, memorySettings: _ms, ...writable } = got;
    const put = await call(h, 'PUT', `/cluster/${id}`, { ...writable, description: 'changed', password: '******' });
    expect(put.status).toBe(200);
    expect(put.body).toBe('');
    const raw = await h.store.col('clusters').findOne({ _id: id } as never);
    expect(String(raw?.password)).toMatch(/^enc:v1:/);
    expect((await call(h, 'GET', `/cluster/${id}`)).body.description).toBe('changed');
    const np = await call(h, 'PUT', `/cluster/${id}`, { password: 'new-one' });
    expect(np.status).toBe(200);
    expect((await h.store.col('clusters').findOne({ _id: id } as never))?.password).not.toBe(raw?.password);
    expect((await call(h, 'PUT', `/cluster/${id}`, { name: 'prod' })).status).toBe(409);
    expect((await call(h, 'PUT', `/cluster/${id}`, { memorySettings: { driverMemory: 'x' } })).status).toBe(409);
    expect((await call(h, 'PUT', '/cluster/nope', { description: 'x' })).status).toBe(404);
  });

  it('needs the credentials again when the url or a storage endpoint changes', async () => {
    const { body } = await call(h, 'POST', '/cluster', k8s('moving', { token: 'bearer-token-of-a' }));
    const id = body.clusterId;
    const raw = async () => (await h.store.col('clusters').findOne({ _id: id } as never))!;
    const before = await raw();

    // A new url with the stored credentials kept (left out, or sent back masked): 409 naming what to send.
    for (const put of [
      { url: 'https://elsewhere.example.net:6443' },
      { url: 'https://elsewhere.example.net:6443', token: '******', password: '******' },
    ]) {
      const r = await call(h, 'PUT', `/cluster/${id}`, put);
      expect(r.status).toBe(409);
      expect(r.body.message).toMatch(/the url changes/);
      for (const f of ['token', 'password', 'clientKey', 'clientKeyPassphrase']) expect(r.body.message).toContain(f);
      noSecrets(r.body);
    }
    // Nothing was changed by the refused updates.
    expect(await raw()).toEqual(before);
    // The same url, or a new one with every credential sent again (or removed), goes through.
    expect(
      (await call(h, 'PUT', `/cluster/${id}`, { url: 'https://k8s.example.com:6443', token: '******' })).status,
    ).toBe(200);
    const moved = await call(h, 'PUT', `/cluster/${id}`, {
      url: 'https://elsewhere.example.net:6443',
      token: 'bearer-token-of-b',
      password: 'password-of-b',
      clientKey: '',
      clientKeyPassphrase: '',
    });
    expect(moved.status).toBe(200);
    const after = await raw();
    expect(after.url).toBe('https://elsewhere.example.net:6443');
    expect(String(after.token)).toMatch(/^enc:v1:/);
    expect(after.token).not.toBe(before.token);
    expect(after.clientKey).toBeUndefined();

    // A storage's endpoint: its keys are not kept for a new endpoint either.
    const storage = (extra: Record<string, unknown>) => ({
      storages: { main: { sparkBucket: 'spark', endpoint: 'https://s3.elsewhere.example.net', ...extra } },
    });
    const kept = await call(h, 'PUT', `/cluster/${id}`, storage({ accessKey: '******', secretKey: '******' }));
    expect(kept.status).toBe(409);
    expect(kept.body.message).toMatch(
      /the storage endpoint changes.*storages\.main\.accessKey, storages\.main\.secretKey/,
    );
    noSecrets(kept.body);
    expect((await raw()).storages).toEqual(before.storages);
    // Masked keys on the same endpoint are kept as before; new keys with a new endpoint go through.
    const same = await call(h, 'PUT', `/cluster/${id}`, {
      storages: { main: { ...k8s('x').storages.main, accessKey: '******', secretKey: '******' } },
    });
    expect(same.status).toBe(200);
    expect((await raw()).storages.main.accessKey).toBe(before.storages.main.accessKey);
    expect((await call(h, 'PUT', `/cluster/${id}`, storage({ accessKey: 'AK-NEW', secretKey: 'SK-NEW' }))).status).toBe(
      200,
    );
    const stored = (await raw()).storages.main;
    expect(stored.endpoint).toBe('https://s3.elsewhere.example.net');
    expect(String(stored.accessKey)).toMatch(/^enc:v1:/);
    expect(stored.accessKey).not.toBe(before.storages.main.accessKey);
  });

  it('pages, sorts and searches', async () => {
    for (const n of ['page-a', 'page-b', 'page-c'])
      await call(h, 'POST', '/cluster', { name: n, type: 'local', description: 'pageable thing' });
    const p0 = await call(h, 'GET', '/cluster?search=pageable&size=2&sort=name,desc');
    expect(p0.status).toBe(200);
    expect(p0.body).toMatchObject({
      totalElements: 3,
      totalPages: 2,
      first: true,
      last: false,
      empty: false,
      sort: ['name,desc'],
    });
    expect(p0.body.page).toEqual({ number: 0, size: 2, offset: 0, paged: true });
    expect(p0.body.content.map((c: { name: string }) => c.name)).toEqual(['page-c', 'page-b']);
    const p1 = await call(h, 'GET', '/cluster?search=PAGEABLE&size=2&page=1&sort=name,desc');
    expect(p1.body.content.map((c: { name: string }) => c.name)).toEqual(['page-a']);
    expect(p1.body).toMatchObject({ first: false, last: true });
    const none = await call(h, 'GET', '/cluster?search=zzz-nothing');
    expect(none.body).toMatchObject({ totalElements: 0, empty: true, content: [] });
    expect((await call(h, 'GET', '/cluster?sort=password,asc')).status).toBe(409);
    expect((await call(h, 'GET', '/cluster?size=0')).status).toBe(409);
    expect((await call(h, 'GET', '/cluster?page=-1')).status).toBe(409);
    expect((await call(h, 'GET', '/cluster?size=abc')).status).toBe(409);
  });

  it('deletes clusters, but not the default nor one in use', async () => {
    const { body } = await call(h, 'POST', '/cluster', { name: 'doomed', type: 'local' });
    await h.store
      .col('jobs')
      .insertOne({ _id: 'j-using', jobId: 'j-using', clusterName: 'doomed', state: 'BUSY' } as never);
    const inUse = await call(h, 'DELETE', `/cluster/${body.clusterId}`);
    expect(inUse.status).toBe(409);
    expect(inUse.body.message).toMatch(/in use/);
    await h.store.col('jobs').deleteOne({ _id: 'j-using' } as never);
    expect((await call(h, 'DELETE', `/cluster/${body.clusterId}`)).status).toBe(200);
    expect((await call(h, 'GET', `/cluster/${body.clusterId}`)).status).toBe(404);
    expect((await call(h, 'DELETE', `/cluster/${body.clusterId}`)).status).toBe(404);
    expect((await call(h, 'DELETE', '/cluster/default')).status).toBe(409);
  });

  it('answers unknown paths with 404 and a message, and serves health and OpenAPI', async () => {
    const r = await call(h, 'GET', '/nothing-here');
    expect(r.status).toBe(404);
    expect(r.body.message).toMatch(/no such path/);
    const health = await call(h, 'GET', '/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'UP', temporal: { up: true }, mongo: { up: true } });
    const doc = await call(h, 'GET', '/openapi.json');
    expect(doc.body.openapi).toBe('3.1.0');
    expect(
      doc.body.paths['/api/v1/cluster/{clusterId}'].put.requestBody.content['application/json'].schema.properties
        .resourceQuota,
    ).toBeDefined();
  });

  it("takes Ilum 1.5.3's local cluster field threads, and lists cluster names", async () => {
    const r = await call(h, 'POST', '/cluster', { name: 'threaded', type: 'local', threads: 3 });
    expect(r.status).toBe(200);
    expect((await call(h, 'GET', `/cluster/${r.body.clusterId}`)).body).toMatchObject({
      threads: 3,
      sparkMaster: 'local[3]',
    });
    const bad = await call(h, 'POST', '/cluster', k8s('k8s-threads', { threads: 2 }));
    expect(bad.status).toBe(409);
    expect(bad.body.message).toMatch(/threads/);
    const names = await call(h, 'GET', '/cluster/names');
    expect(names.status).toBe(200);
    expect(names.body.names).toContain('default');
    expect(names.body.names).toContain('threaded');
    expect([...names.body.names].sort()).toEqual(names.body.names);
  });

  it('answers a method a known path does not take with 405, Allow and a message; sorts by 1.5.3 field names', async () => {
    // node:http, since fetch refuses TRACE.
    for (const method of ['PATCH', 'TRACE', 'POST']) {
      const path = '/cluster/default';
      const res = await new Promise<{ status: number; allow: string; body: string }>((resolve, reject) => {
        const req = http.request(`${h.url}${path}`, { method }, (r) => {
          let body = '';
          r.on('data', (c) => (body += c));
          r.on('end', () => resolve({ status: r.statusCode!, allow: String(r.headers.allow), body }));
        });
        req.on('error', reject);
        req.end();
      });
      expect(res.status).toBe(405);
      expect(res.allow).toMatch(/GET/);
      expect(JSON.parse(res.body).message).toMatch(/not a method/);
    }
    expect((await call(h, 'GET', '/job?sort=name,asc')).status).toBe(200);
    expect((await call(h, 'POST', '/schedule/nope/stop')).status).toBe(404);
  });
});
