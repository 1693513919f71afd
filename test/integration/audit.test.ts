// The audit trail's bounds, through the real API and MongoDB with authentication on: a flood of calls
// without valid credentials writes no record (it is counted on /metrics), and a principal's records are
// bounded per minute (the rest counted as dropped) while other principals' are still written.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_WINDOW_MS } from '../../api/audit/trail';
import { metricSum, parseMetrics } from '../../testkit/metrics';
import { call, startHarness, type Harness } from '../harness';

const ADMIN_KEY = `test-admin-${randomBytes(24).toString('hex')}`;
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const MAX = 5;

let h: Harness;
let operator: { keyId: string; key: string };

beforeAll(async () => {
  h = await startHarness({
    worker: false,
    env: { AUTH_MODE: 'on', AUTH_ADMIN_KEY: ADMIN_KEY, AUDIT_MAX_PER_MINUTE: String(MAX) },
  });
  const r = await call(h, 'POST', '/auth/keys', { name: 'ops', role: 'operator' }, bearer(ADMIN_KEY));
  expect(r.status).toBe(200);
  operator = r.body;
});
afterAll(async () => h?.stop());

const metrics = async () => {
  const res = await fetch(h.url.replace(/\/api\/v1$/, '') + '/metrics', { headers: bearer(ADMIN_KEY) });
  expect(res.status).toBe(200);
  return parseMetrics(await res.text());
};

const auditOf = async (query: string) => {
  const r = await call(h, 'GET', `/audit?size=1000&${query}`, undefined, bearer(ADMIN_KEY));
  expect(r.status).toBe(200);
  return r.body.content as { principal: string; status: number; path: string }[];
};

/** The per-principal budget is per clock minute: a burst should not straddle two. */
async function awayFromMinuteEdge() {
  const left = AUDIT_WINDOW_MS - (Date.now() % AUDIT_WINDOW_MS);
  if (left < 10_000) await new Promise((r) => setTimeout(r, left + 100));
}

describe('audit trail bounds', () => {
  it('writes no record for calls without valid credentials, and counts them', async () => {
    const before = metricSum(await metrics(), 'spark_audit_unidentified_total', { status: '401' });
    const flood = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        call(h, 'POST', '/job/submit', { name: `x${i}` }, i % 2 ? bearer(`sok_not-a-key-${i}`) : {}),
      ),
    );
    expect(flood.every((r) => r.status === 401)).toBe(true);
    const records = await auditOf('methods=POST');
    expect(records.filter((r) => r.status === 401 || r.principal === 'unauthenticated')).toEqual([]);
    expect(metricSum(await metrics(), 'spark_audit_unidentified_total', { status: '401' }) - before).toBe(40);
  });

  it("writes at most AUDIT_MAX_PER_MINUTE of a principal's records a minute, counts the rest, and still writes others'", async () => {
    await awayFromMinuteEdge();
    const dropped = metricSum(await metrics(), 'spark_audit_records_dropped_total');
    for (let i = 0; i < MAX + 4; i++)
      expect((await call(h, 'DELETE', `/job/missing-${i}`, undefined, bearer(operator.key))).status).toBe(404);
    // Another principal in the same minute: its own budget.
    const other = await call(h, 'DELETE', '/job/admins-own', undefined, bearer(ADMIN_KEY));
    expect(other.status).toBe(404);

    const mine = await auditOf(`principals=key:${operator.keyId}`);
    expect(mine).toHaveLength(MAX);
    expect(mine.every((r) => r.status === 404 && r.path.startsWith('/api/v1/job/missing-'))).toBe(true);
    expect(await auditOf('resourceId=admins-own')).toEqual([
      expect.objectContaining({ principal: 'key:bootstrap', status: 404 }),
    ]);
    expect(metricSum(await metrics(), 'spark_audit_records_dropped_total') - dropped).toBe(4);
  });
});
