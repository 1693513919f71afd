// The audit trail middleware alone, over a recording collection: what it records for a call that answers,
// one that throws through it, and a read (nothing); a call with no principal is only counted, and each
// principal's records are bounded per minute, the rest counted as dropped.
import type { Context } from 'koa';
import type { Collection } from 'mongodb';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AUDIT_WINDOW_MS, auditTrail, createAuditWriter, type AuditDoc, type AuditWriter } from '../../api/audit/trail';
import { conflict } from '../../api/errors';
import type { Store } from '../../lib/mongo';
import { metricSum, parseMetrics } from '../../testkit/metrics';

/** A collection that records what each insertMany wrote, after `delayMs`; the first `failures` calls fail. */
function recordingCollection(delayMs = 0, failures = 0) {
  const docs: AuditDoc[] = [];
  const batches: AuditDoc[][] = [];
  let calls = 0;
  const col = {
    insertMany: async (ds: AuditDoc[]) => {
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      if (++calls <= failures) throw new Error('database down');
      batches.push([...ds]);
      docs.push(...ds);
    },
  } as unknown as Collection<AuditDoc>;
  return { col, docs, batches };
}

function recording(opts: { maxPerMinute?: number; now?: () => number; writer?: AuditWriter } = {}) {
  const c = recordingCollection();
  const store = { col: () => c.col } as unknown as Store;
  const registry = new Registry();
  const counted = async () => parseMetrics(await registry.metrics());
  return { docs: c.docs, counted, mw: auditTrail(store, { ...opts, registry }) };
}

const ctxOf = (method: string, fields: Partial<Context> = {}) =>
  ({ method, path: '/api/v1/job/j1/cancel', params: {}, state: {}, status: 404, ...fields }) as unknown as Context;
const as = (id: string, role = 'operator') => ({ state: { principal: { id, role } } }) as Partial<Context>;

describe('audit trail middleware', () => {
  afterEach(() => void vi.useRealTimers());

  it('records principal, method, path, resource id, status and time of a state-changing call', async () => {
    const { docs, mw } = recording();
    const ctx = ctxOf('POST', { params: { jobId: 'j1' }, ...as('key:k1') });
    const before = Date.now();
    await mw(ctx, async () => {
      ctx.status = 200;
    });
    expect(docs).toEqual([
      expect.objectContaining({
        principal: 'key:k1',
        role: 'operator',
        method: 'POST',
        path: '/api/v1/job/j1/cancel',
        resourceId: 'j1',
        status: 200,
      }),
    ]);
    expect(docs[0].time).toBeGreaterThanOrEqual(before);
  });

  it('records the status an error thrown through it will answer, and rethrows it', async () => {
    const { docs, mw } = recording();
    const err = conflict('the job is not running');
    await expect(
      mw(ctxOf('POST', as('key:k1')), async () => {
        throw err;
      }),
    ).rejects.toBe(err);
    expect(docs).toEqual([expect.objectContaining({ principal: 'key:k1', role: 'operator', status: 409 })]);
  });

  it('records nothing for reads', async () => {
    const { docs, mw } = recording();
    for (const m of ['GET', 'HEAD', 'OPTIONS']) await mw(ctxOf(m), async () => undefined);
    expect(docs).toEqual([]);
  });

  it('counts, and does not record, calls refused before the caller was identified', async () => {
    const { docs, counted, mw } = recording();
    for (let i = 0; i < 50; i++) {
      const ctx = ctxOf('POST');
      await mw(ctx, async () => {
        ctx.status = 401;
      });
    }
    expect(docs).toEqual([]);
    expect(metricSum(await counted(), 'spark_audit_unidentified_total', { status: '401' })).toBe(50);
  });

  it('records at most maxPerMinute calls per principal a minute and counts the rest as dropped', async () => {
    let t = 10 * AUDIT_WINDOW_MS;
    const { docs, counted, mw } = recording({ maxPerMinute: 3, now: () => t });
    const call = (who: string) => mw(ctxOf('DELETE', as(who)), async () => undefined);
    for (let i = 0; i < 5; i++) await call('key:busy');
    await call('key:quiet');
    expect(docs.map((d) => d.principal)).toEqual(['key:busy', 'key:busy', 'key:busy', 'key:quiet']);
    expect(metricSum(await counted(), 'spark_audit_records_dropped_total')).toBe(2);
    // The next minute, the budget is whole again.
    t += AUDIT_WINDOW_MS;
    await call('key:busy');
    expect(docs.filter((d) => d.principal === 'key:busy')).toHaveLength(4);
  });

  it('writes the records of calls answered in the same turn in one insert, each call waiting for its own', async () => {
    const c = recordingCollection(5);
    const store = { col: () => c.col } as unknown as Store;
    const mw = auditTrail(store, { registry: new Registry() });
    await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        mw(ctxOf('POST', { ...as(`key:k${i}`), params: { jobId: `j${i}` } }), async () => undefined),
      ),
    );
    // Every call returned only once its record was written.
    expect(c.docs.map((d) => d.resourceId)).toEqual(['j0', 'j1', 'j2', 'j3', 'j4']);
    expect(c.batches).toHaveLength(1);
  });

  it('does not hold a call whose route answered by itself: its record follows within the linger, batched', async () => {
    vi.useFakeTimers();
    const c = recordingCollection();
    const writer = createAuditWriter(() => c.col, 30);
    const store = { col: () => c.col } as unknown as Store;
    const mw = auditTrail(store, { registry: new Registry(), writer });
    for (let i = 0; i < 3; i++) {
      const ctx = ctxOf('POST', { ...as('key:k1'), params: { jobId: `s${i}` } });
      await mw(ctx, async () => {
        ctx.status = 200;
        ctx.respond = false; // the route wrote its answer itself (POST /sql/execute)
      });
      await vi.advanceTimersByTimeAsync(5);
    }
    expect(c.docs).toEqual([]);
    await vi.advanceTimersByTimeAsync(30);
    expect(c.batches.map((b) => b.map((d) => d.resourceId))).toEqual([['s0', 's1', 's2']]);
  });

  it('writes lingering records at once on flush(), and resolves it once they are written', async () => {
    const c = recordingCollection(5);
    const writer = createAuditWriter(() => c.col, 60_000);
    const doc = (id: string): AuditDoc => ({
      _id: id,
      principal: 'key:k1',
      role: 'operator',
      method: 'POST',
      path: '/api/v1/sql/execute',
      resourceId: null,
      status: 200,
      time: 0,
    });
    void writer.write(doc('a'), true);
    void writer.write(doc('b'), true);
    await writer.flush();
    expect(c.docs.map((d) => d._id)).toEqual(['a', 'b']);
  });

  it('logs a failed write and does not fail the call; the next records are written', async () => {
    const c = recordingCollection(0, 1);
    const store = { col: () => c.col } as unknown as Store;
    const mw = auditTrail(store, { registry: new Registry() });
    await mw(ctxOf('POST', as('key:k1')), async () => undefined);
    expect(c.docs).toEqual([]);
    await mw(ctxOf('POST', as('key:k2')), async () => undefined);
    expect(c.docs.map((d) => d.principal)).toEqual(['key:k2']);
  });
});
