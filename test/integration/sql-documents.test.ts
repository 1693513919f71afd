// Saved SQL statements, notebooks and the query history through the real API against the real
// MongoDB-protocol server: CRUD, lists, validation, the OpenAPI document, and the history stream over SSE
// and Socket.IO. History records are inserted directly (the execute service writes them in production).
import { io as ioClient, type Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, eventually, startHarness, type Harness } from '../harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ worker: false });
});
afterAll(async () => h?.stop());

const saved = (extra: Record<string, unknown> = {}) => ({
  name: 'top customers',
  statement: 'SELECT * FROM customers ORDER BY spend DESC',
  engine: 'SPARK_SQL',
  maxRows: 50,
  ...extra,
});
const notebook = (extra: Record<string, unknown> = {}) => ({
  name: 'weekly report',
  statements: [
    { id: 'c1', language: 'MARKDOWN', code: '# Weekly' },
    { id: 'c2', language: 'SQL', code: 'SELECT count(*) FROM orders' },
  ],
  ...extra,
});
const names = (r: { body: { content: { name: string }[] } }) => r.body.content.map((c) => c.name);

describe('saved SQL statements', () => {
  it('creates, reads at once, replaces and deletes a statement', async () => {
    const c = await call(h, 'POST', '/sql/statement', saved());
    expect(c.status).toBe(200);
    expect(c.body).toEqual({ id: expect.stringMatching(/^[0-9a-f]{32}$/) });
    const id = c.body.id;
    const g = await call(h, 'GET', `/sql/statement/${id}`);
    expect(g.status).toBe(200);
    expect(g.body).toEqual({ id, ...saved() });

    const put = await call(h, 'PUT', `/sql/statement/${id}`, {
      name: 'renamed',
      statement: 'SELECT 2',
      engine: 'TRINO',
    });
    expect(put).toEqual({ status: 200, body: '' });
    // The whole body replaces the data: maxRows, not given, is gone.
    expect((await call(h, 'GET', `/sql/statement/${id}`)).body).toEqual({
      id,
      name: 'renamed',
      statement: 'SELECT 2',
      engine: 'TRINO',
    });

    expect(await call(h, 'DELETE', `/sql/statement/${id}`)).toEqual({ status: 200, body: '' });
    const after = await call(h, 'GET', `/sql/statement/${id}`);
    expect(after.status).toBe(404);
    expect(after.body.message).toMatch(/does not exist/);
    expect((await call(h, 'DELETE', `/sql/statement/${id}`)).status).toBe(404);
    expect((await call(h, 'PUT', `/sql/statement/${id}`, saved())).status).toBe(404);
  });

  it('defaults the engine to SPARK_SQL and allows two statements of one name', async () => {
    const a = await call(h, 'POST', '/sql/statement', { name: 'twin', statement: 'SELECT 1' });
    const b = await call(h, 'POST', '/sql/statement', { name: 'twin', statement: 'SELECT 2' });
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body.id).not.toBe(b.body.id);
    expect((await call(h, 'GET', `/sql/statement/${a.body.id}`)).body.engine).toBe('SPARK_SQL');
  });

  it.each([
    [{ name: '' }, /^name: must not be empty/],
    [{ name: '   ' }, /^name: must not be empty/],
    [{ name: 7 }, /^name: .*string/],
    [{ name: 'x'.repeat(256) }, /^name: /],
    [{ statement: undefined }, /^statement: /],
    [{ statement: '' }, /^statement: must not be empty/],
    [{ statement: ['SELECT 1'] }, /^statement: .*string/],
    [{ engine: 'MYSQL' }, /^engine: must be one of SPARK_SQL, TRINO/],
    [{ maxRows: 0 }, /^maxRows: /],
    [{ maxRows: -5 }, /^maxRows: /],
    [{ maxRows: 2.5 }, /^maxRows: /],
    [{ maxRows: '10' }, /^maxRows: .*number/],
  ])('answers 409 naming the field for %j, on create and on update', async (patch, message) => {
    const body = JSON.parse(JSON.stringify(saved(patch)));
    const c = await call(h, 'POST', '/sql/statement', body);
    expect(c.status).toBe(409);
    expect(c.body.message).toMatch(message);
    const { id } = (await call(h, 'POST', '/sql/statement', saved())).body;
    const u = await call(h, 'PUT', `/sql/statement/${id}`, body);
    expect(u.status).toBe(409);
    expect(u.body.message).toMatch(message);
    expect((await call(h, 'GET', `/sql/statement/${id}`)).body).toEqual({ id, ...saved() });
  });

  it('answers 400 for malformed JSON, a body that is not an object, or the wrong content type', async () => {
    const { id } = (await call(h, 'POST', '/sql/statement', saved())).body;
    for (const [method, p] of [
      ['POST', '/sql/statement'],
      ['PUT', `/sql/statement/${id}`],
    ]) {
      const bad = await call(h, method, p, '{"name": ', { 'content-type': 'application/json' });
      expect(bad.status).toBe(400);
      expect(bad.body.message).toEqual(expect.any(String));
      expect((await call(h, method, p, 'name=x', { 'content-type': 'text/plain' })).status).toBe(400);
      expect(
        (await call(h, method, p, 'name=x&statement=y', { 'content-type': 'application/x-www-form-urlencoded' }))
          .status,
      ).toBe(400);
      expect((await call(h, method, p, [saved()])).status).toBe(400);
      expect((await call(h, method, p, 'null', { 'content-type': 'application/json' })).status).toBe(400);
    }
  });

  it('pages, sorts and searches over name and statement text', async () => {
    for (const n of ['pg-b', 'pg-a', 'pg-c'])
      await call(h, 'POST', '/sql/statement', { name: n, statement: 'SELECT zebra FROM t' });
    await call(h, 'POST', '/sql/statement', { name: 'zebra-named', statement: 'SELECT 1' });
    const p0 = await call(h, 'GET', '/sql/statement?search=ZEBRA&size=2&sort=name,desc');
    expect(p0.status).toBe(200);
    expect(p0.body).toMatchObject({ totalElements: 4, totalPages: 2, first: true, last: false, sort: ['name,desc'] });
    expect(p0.body.page).toEqual({ number: 0, size: 2, offset: 0, paged: true });
    expect(names(p0)).toEqual(['zebra-named', 'pg-c']);
    const p1 = await call(h, 'GET', '/sql/statement?search=zebra&size=2&page=1&sort=name,desc');
    expect(names(p1)).toEqual(['pg-b', 'pg-a']);
    expect(p1.body).toMatchObject({ first: false, last: true });
    // Default order: by name, ascending; the internal times are not part of the resource.
    const dflt = await call(h, 'GET', '/sql/statement?search=pg-');
    expect(names(dflt)).toEqual(['pg-a', 'pg-b', 'pg-c']);
    expect(dflt.body.sort).toEqual(['name,asc']);
    expect(Object.keys(dflt.body.content[0]).sort()).toEqual(['engine', 'id', 'name', 'statement']);
    const byTime = await call(h, 'GET', '/sql/statement?search=pg-&sort=createdTime,desc');
    expect(names(byTime)).toEqual(['pg-c', 'pg-a', 'pg-b']);
    expect((await call(h, 'GET', '/sql/statement?search=nothing-like-this')).body).toMatchObject({
      totalElements: 0,
      empty: true,
      content: [],
    });
    for (const q of ['sort=statement,asc', 'sort=name,up', 'size=0', 'size=100000', 'page=-1', 'size=abc']) {
      expect((await call(h, 'GET', `/sql/statement?${q}`)).status).toBe(409);
    }
  });
});

describe('SQL notebooks', () => {
  it('creates, reads at once, replaces and deletes a notebook', async () => {
    const c = await call(h, 'POST', '/sql/notebooks', notebook());
    expect(c.status).toBe(200);
    const id = c.body.id;
    expect((await call(h, 'GET', `/sql/notebooks/${id}`)).body).toEqual({ id, ...notebook() });
    const cells = [{ id: 'c9', language: 'PYTHON', code: 'print(1)' }];
    expect(await call(h, 'PUT', `/sql/notebooks/${id}`, { name: 'renamed', statements: cells })).toEqual({
      status: 200,
      body: '',
    });
    expect((await call(h, 'GET', `/sql/notebooks/${id}`)).body).toEqual({ id, name: 'renamed', statements: cells });
    // statements defaults to no cells.
    expect((await call(h, 'PUT', `/sql/notebooks/${id}`, { name: 'empty' })).status).toBe(200);
    expect((await call(h, 'GET', `/sql/notebooks/${id}`)).body).toEqual({ id, name: 'empty', statements: [] });
    expect(await call(h, 'DELETE', `/sql/notebooks/${id}`)).toEqual({ status: 200, body: '' });
    expect((await call(h, 'GET', `/sql/notebooks/${id}`)).status).toBe(404);
    expect((await call(h, 'DELETE', `/sql/notebooks/${id}`)).status).toBe(404);
    expect((await call(h, 'PUT', `/sql/notebooks/${id}`, notebook())).status).toBe(404);
  });

  it.each([
    [{ name: '' }, /^name: must not be empty/],
    [{ name: null }, /^name: /],
    [{ statements: 'SELECT 1' }, /^statements: .*array/],
    [{ statements: [{ id: 'a', language: 'SQL' }] }, /^statements\.0\.code: /],
    [
      { statements: [{ id: 'a', language: 'R', code: 'x' }] },
      /^statements\.0\.language: must be one of SQL, MARKDOWN, PYTHON, SCALA/,
    ],
    [{ statements: [{ id: '', language: 'SQL', code: 'x' }] }, /^statements\.0\.id: /],
    [{ statements: [{ id: 1, language: 'SQL', code: 'x' }] }, /^statements\.0\.id: .*string/],
    [
      {
        statements: [
          { id: 'a', language: 'SQL', code: 'x' },
          { id: 'b', language: 'SQL', code: 'y' },
          { id: 'a', language: 'SQL', code: 'z' },
        ],
      },
      /^statements\.2\.id: 'a' is already the id of statements\.0/,
    ],
  ])('answers 409 naming the field for %j, on create and on update', async (patch, message) => {
    const c = await call(h, 'POST', '/sql/notebooks', notebook(patch));
    expect(c.status).toBe(409);
    expect(c.body.message).toMatch(message);
    const { id } = (await call(h, 'POST', '/sql/notebooks', notebook())).body;
    const u = await call(h, 'PUT', `/sql/notebooks/${id}`, notebook(patch));
    expect(u.status).toBe(409);
    expect(u.body.message).toMatch(message);
    expect((await call(h, 'GET', `/sql/notebooks/${id}`)).body).toEqual({ id, ...notebook() });
  });

  it('answers 400 for malformed JSON or the wrong content type', async () => {
    expect((await call(h, 'POST', '/sql/notebooks', '{"name": [', { 'content-type': 'application/json' })).status).toBe(
      400,
    );
    const form = new FormData();
    form.append('name', 'x');
    const f = await call(h, 'POST', '/sql/notebooks', form);
    expect(f.status).toBe(400);
    expect(f.body.message).toMatch(/JSON/);
  });

  it('pages, sorts and searches over names and cell code', async () => {
    for (const n of ['nb-2', 'nb-1', 'nb-3']) await call(h, 'POST', '/sql/notebooks', notebook({ name: n }));
    await call(h, 'POST', '/sql/notebooks', {
      name: 'other',
      statements: [{ id: 'x', language: 'SQL', code: 'SELECT nb-marker' }],
    });
    expect(names(await call(h, 'GET', '/sql/notebooks?search=nb-'))).toEqual(['nb-1', 'nb-2', 'nb-3', 'other']);
    const p = await call(h, 'GET', '/sql/notebooks?search=nb-&size=3&page=1&sort=name,desc');
    expect(names(p)).toEqual(['nb-1']);
    expect(p.body).toMatchObject({ totalElements: 4, totalPages: 2, last: true });
    expect(names(await call(h, 'GET', '/sql/notebooks?search=NB-MARKER'))).toEqual(['other']);
    expect((await call(h, 'GET', '/sql/notebooks?sort=statements,asc')).status).toBe(409);
  });
});

// ---- query history ---------------------------------------------------------------------------------

let seq = 0;
/** A history document as the execute service writes it: the entry plus `_id` = id. */
const entry = (extra: Record<string, unknown> = {}) => {
  const id = `h-${++seq}-${Math.random().toString(36).slice(2, 8)}`;
  return {
    _id: id,
    id,
    clusterId: 'c1',
    clusterName: 'one',
    engine: 'SPARK_SQL',
    engineId: 'sparksql-c1',
    statement: 'SELECT 1',
    state: 'FINISHED',
    creationTime: 1_000 + seq,
    startTime: 1_001 + seq,
    completionTime: 1_002 + seq,
    rows: 1,
    maxRows: 1000,
    ...extra,
  };
};
const history = () => h.store.col('sqlHistory');
const ids = (r: { body: { content: { id: string }[] } }) => r.body.content.map((c) => c.id);

describe('query history', () => {
  it('lists newest first, filters by cluster, engine and state in both array forms, and searches', async () => {
    const docs = [
      entry({ clusterId: 'hc-a', statement: 'SELECT alpha' }),
      entry({
        clusterId: 'hc-b',
        engine: 'TRINO',
        engineId: 'trino-hc-b',
        statement: 'SELECT beta',
        state: 'ERROR',
        error: 'boom',
      }),
      entry({
        clusterId: 'hc-c',
        statement: 'SELECT gamma',
        state: 'RUNNING',
        completionTime: undefined,
        rows: undefined,
      }),
      entry({ clusterId: 'hc-a', engine: 'TRINO', statement: 'select ALPHA again', state: 'TIMEDOUT' }),
    ].map((d) => JSON.parse(JSON.stringify(d)));
    await history().insertMany(docs);
    const all = await call(h, 'GET', '/sql/history?clusterIds=hc-a,hc-b,hc-c');
    expect(all.status).toBe(200);
    expect(all.body.sort).toEqual(['creationTime,desc']);
    expect(ids(all)).toEqual([docs[3].id, docs[2].id, docs[1].id, docs[0].id]);
    const { _id, ...resource } = docs[1];
    expect(all.body.content[2]).toEqual(resource);

    const repeated = await call(h, 'GET', '/sql/history?clusterIds=hc-a&clusterIds=hc-c&sort=creationTime,asc');
    expect(ids(repeated)).toEqual([docs[0].id, docs[2].id, docs[3].id]);
    expect(ids(await call(h, 'GET', '/sql/history?clusterIds=hc-a,hc-b&engines=TRINO'))).toEqual([
      docs[3].id,
      docs[1].id,
    ]);
    const states = await call(h, 'GET', '/sql/history?clusterIds=hc-a,hc-b,hc-c&states=ERROR&states=RUNNING');
    expect(ids(states)).toEqual([docs[2].id, docs[1].id]);
    expect(ids(await call(h, 'GET', '/sql/history?search=alpha'))).toEqual([docs[3].id, docs[0].id]);
    const page = await call(h, 'GET', '/sql/history?clusterIds=hc-a,hc-b,hc-c&size=3&page=1');
    expect(page.body).toMatchObject({ totalElements: 4, totalPages: 2, first: false, last: true });
    expect(ids(page)).toEqual([docs[0].id]);
    expect(ids(await call(h, 'GET', '/sql/history?clusterIds=hc-a,hc-b,hc-c&sort=state,asc'))).toEqual([
      docs[1].id,
      docs[0].id,
      docs[2].id,
      docs[3].id,
    ]);
    for (const q of ['engines=MYSQL', 'states=DONE', 'sort=statement,asc', 'size=0']) {
      const r = await call(h, 'GET', `/sql/history?${q}`);
      expect(r.status).toBe(409);
      expect(r.body.message).toMatch(q.split('=')[0]);
    }
  });
});

/** An SSE connection collecting its events until closed. */
async function openSse(url: string) {
  const ctrl = new AbortController();
  const events: { id: string; event: string; data: any }[] = [];
  const res = await fetch(url, { signal: ctrl.signal });
  const reading = (async () => {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += decoder.decode(value, { stream: true });
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const field = (name: string) => new RegExp(`^${name}: (.*)$`, 'm').exec(block)?.[1];
        const data = field('data');
        if (data) events.push({ id: field('id')!, event: field('event')!, data: JSON.parse(data) });
      }
    }
  })().catch(() => undefined);
  return {
    status: res.status,
    events,
    close: async () => {
      ctrl.abort();
      await reading;
    },
  };
}

describe('the query-history stream', () => {
  let socket: Socket | undefined;
  afterAll(() => void socket?.close());

  it('delivers each record as it is inserted and updated, over SSE and Socket.IO, filtered by clusterIds', async () => {
    const sse = await openSse(`${h.url}/sql/history/updates?clusterIds=stream-c`);
    expect(sse.status).toBe(200);
    const received: any[] = [];
    socket = ioClient(h.url.replace('/api/v1', '') + '/sql-history', {
      transports: ['websocket'],
      query: { clusterIds: 'stream-c' },
    });
    socket.on('sqlStatement', (e: any) => received.push(e));
    await new Promise<void>((resolve) => socket!.on('connect', () => resolve()));

    // The feed's change stream opens with the first subscriber: touch a warm-up record until both see it.
    const warm = entry({ clusterId: 'stream-c', state: 'RUNNING' });
    await history().insertOne(warm as never);
    await eventually(
      async () => {
        await history().updateOne({ _id: warm._id } as never, { $inc: { maxRows: 1 } });
        return sse.events.length > 0 && received.length > 0;
      },
      30_000,
      300,
    );
    await new Promise((r) => setTimeout(r, 500));
    const sseFrom = sse.events.length;
    const ioFrom = received.length;

    const other = entry({ clusterId: 'elsewhere', state: 'RUNNING' });
    const mine = JSON.parse(
      JSON.stringify(entry({ clusterId: 'stream-c', state: 'RUNNING', completionTime: undefined, rows: undefined })),
    );
    await history().insertOne(other as never);
    await history().insertOne(mine);
    await history().updateOne({ _id: mine._id }, { $set: { state: 'FINISHED', completionTime: Date.now(), rows: 3 } });
    await history().updateOne({ _id: other._id } as never, { $set: { state: 'FINISHED' } });

    const seen = (list: any[]) => list.filter((e) => e.id !== warm.id);
    await eventually(
      async () =>
        seen(sse.events.slice(sseFrom).map((e) => e.data)).length >= 2 && seen(received.slice(ioFrom)).length >= 2,
      30_000,
      100,
    );
    await new Promise((r) => setTimeout(r, 300));
    for (const got of [sse.events.slice(sseFrom).map((e) => e.data), received.slice(ioFrom)]) {
      const records = seen(got);
      expect(records.map((r) => [r.id, r.state])).toEqual([
        [mine.id, 'RUNNING'],
        [mine.id, 'FINISHED'],
      ]);
      expect(records[1]).toMatchObject({ clusterId: 'stream-c', rows: 3, statement: 'SELECT 1' });
      expect(records[1]._id).toBeUndefined();
    }
    expect(sse.events.every((e) => e.event === 'sqlStatement' && e.id)).toBe(true);
    await sse.close();
  });

  it('filters by engine and refuses an unknown engine', async () => {
    const sse = await openSse(`${h.url}/sql/history/updates?engines=TRINO&clusterIds=engine-c`);
    const warm = entry({ clusterId: 'engine-c', engine: 'TRINO' });
    await history().insertOne(warm as never);
    await eventually(
      async () => {
        await history().updateOne({ _id: warm._id } as never, { $inc: { maxRows: 1 } });
        return sse.events.length > 0;
      },
      30_000,
      300,
    );
    const spark = entry({ clusterId: 'engine-c', engine: 'SPARK_SQL' });
    const trino = entry({ clusterId: 'engine-c', engine: 'TRINO' });
    await history().insertMany([spark, trino] as never[]);
    await eventually(async () => sse.events.some((e) => e.data.id === trino.id), 30_000, 100);
    expect(sse.events.some((e) => e.data.id === spark.id)).toBe(false);
    await sse.close();

    const bad = await call(h, 'GET', '/sql/history/updates?engines=MYSQL');
    expect(bad.status).toBe(409);
    expect(bad.body.message).toMatch(/engines/);
    const refused = ioClient(h.url.replace('/api/v1', '') + '/sql-history', {
      transports: ['websocket'],
      query: { engines: 'MYSQL' },
    });
    const error = await new Promise<{ message: string }>((resolve) => refused.on('error', resolve));
    refused.close();
    expect(error.message).toMatch(/engines/);
  });

  it('keeps the job stream answering as before', async () => {
    const sse = await openSse(`${h.url}/job/updates?jobIds=none`);
    expect(sse.status).toBe(200);
    await sse.close();
    expect((await call(h, 'GET', '/job/updates?tags=novalue')).status).toBe(409);
  });
});

describe('the OpenAPI document', () => {
  it('lists every SQL document path with its schemas', async () => {
    const doc = (await call(h, 'GET', '/openapi.json')).body;
    const p = (path: string) => doc.paths[`/api/v1${path}`];
    expect(Object.keys(p('/sql/statement')).sort()).toEqual(['get', 'post']);
    expect(Object.keys(p('/sql/statement/{sqlSavedId}')).sort()).toEqual(['delete', 'get', 'put']);
    expect(Object.keys(p('/sql/notebooks')).sort()).toEqual(['get', 'post']);
    expect(Object.keys(p('/sql/notebooks/{sqlNotebookId}')).sort()).toEqual(['delete', 'get', 'put']);
    expect(Object.keys(p('/sql/history'))).toEqual(['get']);
    expect(Object.keys(p('/sql/history/updates'))).toEqual(['get']);
    const body = (path: string, m: string) => p(path)[m].requestBody.content['application/json'].schema;
    expect(body('/sql/statement', 'post').required).toEqual(expect.arrayContaining(['name', 'statement']));
    expect(body('/sql/statement/{sqlSavedId}', 'put').properties.engine.enum).toEqual(['SPARK_SQL', 'TRINO']);
    expect(body('/sql/notebooks', 'post').properties.statements.items.properties.language.enum).toContain('MARKDOWN');
    const ok = (path: string, m: string) => p(path)[m].responses[200].content['application/json'].schema;
    expect(ok('/sql/statement', 'post').properties.id).toBeDefined();
    expect(ok('/sql/notebooks/{sqlNotebookId}', 'get').properties.statements).toBeDefined();
    expect(ok('/sql/history', 'get').properties.content.items.properties.state.enum).toContain('TIMEDOUT');
    const params = p('/sql/history').get.parameters.map((q: { name: string }) => q.name);
    expect(params).toEqual(
      expect.arrayContaining(['page', 'size', 'sort', 'search', 'clusterIds', 'engines', 'states']),
    );
    expect(p('/sql/history/updates').get.parameters.map((q: { name: string }) => q.name)).toEqual([
      'clusterIds',
      'engines',
    ]);
    expect(p('/job/updates').get.parameters.map((q: { name: string }) => q.name)).toContain('jobIds');
  });
});
