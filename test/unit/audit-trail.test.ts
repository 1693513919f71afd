// The audit trail middleware alone, over a recording collection: what it records for a call that answers,
// one that throws through it, and a read (nothing).
import type { Context } from 'koa';
import { describe, expect, it } from 'vitest';
import { auditTrail, type AuditDoc } from '../../api/audit/trail';
import { conflict } from '../../api/errors';
import type { Store } from '../../lib/mongo';

function recording() {
  const docs: AuditDoc[] = [];
  const store = { col: () => ({ insertOne: async (d: AuditDoc) => void docs.push(d) }) } as unknown as Store;
  return { docs, mw: auditTrail(store) };
}

const ctxOf = (method: string, fields: Partial<Context> = {}) =>
  ({ method, path: '/api/v1/job/j1/cancel', params: {}, state: {}, status: 404, ...fields }) as unknown as Context;

describe('audit trail middleware', () => {
  it('records principal, method, path, resource id, status and time of a state-changing call', async () => {
    const { docs, mw } = recording();
    const ctx = ctxOf('POST', { params: { jobId: 'j1' }, state: { principal: { id: 'key:k1', role: 'operator' } } });
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
      mw(ctxOf('POST'), async () => {
        throw err;
      }),
    ).rejects.toBe(err);
    expect(docs).toEqual([expect.objectContaining({ principal: 'unauthenticated', role: null, status: 409 })]);
  });

  it('records nothing for reads', async () => {
    const { docs, mw } = recording();
    for (const m of ['GET', 'HEAD', 'OPTIONS']) await mw(ctxOf(m), async () => undefined);
    expect(docs).toEqual([]);
  });
});
