// The console's log view bookkeeping (console/src/pages/jobs-logs-model.ts) against logs served the way
// GET /job/{id}/logs pages them: one `from` for every resource, `logSize` lines at most from each.
import { describe, expect, it } from 'vitest';
import { end, merge, pollFrom, prependOlder, type Views } from '../../console/src/pages/jobs-logs-model';
import type { JobLogEntry } from '../../domain/resources';

/** Resources' logs as the service holds them: name → [phase, lines]. */
type Logs = Record<string, [state: string, lines: string[]]>;
const lines = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

function page(logs: Logs, from: number, size: number): JobLogEntry[] {
  return Object.entries(logs).map(([name, [state, all]]) => {
    const log = all.slice(from, from + size);
    return { name, type: 'process', role: 'driver', state, from, logSize: log.length, fileName: `${name}.log`, log };
  });
}

/** The component's catch-up: read forward in chunks until every log returns a short page. */
function catchUp(logs: Logs, chunk: number, keep: number): Views {
  let views: Views = {};
  for (let from = 0; ; from += chunk) {
    const entries = page(logs, from, chunk);
    views = merge(views, entries, keep);
    if (!entries.some((e) => e.logSize >= chunk)) return views;
  }
}

describe('console log view', () => {
  it('catches up to the end of each log, keeping its last lines with their offsets', () => {
    const logs: Logs = { 'job-1': ['FAILED', lines('a', 250)], 'job-2': ['RUNNING', lines('b', 2345)] };
    const views = catchUp(logs, 1000, 300);
    expect(views['job-1']).toMatchObject({ start: 0, state: 'FAILED' });
    expect(views['job-1'].lines).toEqual(lines('a', 250));
    expect(views['job-2'].start).toBe(2045);
    expect(views['job-2'].lines).toEqual(lines('b', 2345).slice(2045));
    expect(end(views['job-2'])).toBe(2345);
  });

  it('follows the tail of the running log without repeating or losing lines', () => {
    const logs: Logs = { 'job-1': ['FAILED', lines('a', 10)], 'job-2': ['RUNNING', lines('b', 40)] };
    let views = catchUp(logs, 1000, 300);
    logs['job-2'][1].push('b40', 'b41', 'b42');
    // The finished try is not read again: the tail read starts where the running log ended.
    expect(pollFrom(views)).toBe(40);
    views = merge(views, page(logs, pollFrom(views), 1000));
    expect(views['job-2'].lines).toEqual(lines('b', 43));
    expect(views['job-1'].lines).toEqual(lines('a', 10));
    // A read that starts past a view's end leaves a gap and adds nothing to it.
    views = merge(views, page({ 'job-2': ['RUNNING', lines('b', 60)] }, 50, 10));
    expect(end(views['job-2'])).toBe(43);
    // Once every log is done, reads start at the furthest end.
    logs['job-2'][0] = 'SUCCEEDED';
    views = merge(views, page(logs, 43, 1000));
    expect(pollFrom(views)).toBe(43);
  });

  it('picks up the log of a new try from its first line', () => {
    const logs: Logs = { 'job-1': ['RUNNING', lines('a', 5)] };
    let views = catchUp(logs, 1000, 300);
    logs['job-1'][0] = 'FAILED';
    logs['job-2'] = ['PENDING', []];
    views = merge(views, page(logs, pollFrom(views), 1000));
    logs['job-2'] = ['RUNNING', lines('b', 3)];
    expect(pollFrom(views)).toBe(0);
    views = merge(views, page(logs, pollFrom(views), 1000));
    expect(views['job-2']).toMatchObject({ start: 0, lines: lines('b', 3), state: 'RUNNING' });
  });

  it('puts older lines back in front on request', () => {
    const logs: Logs = { 'job-1': ['SUCCEEDED', lines('a', 1500)] };
    let views = catchUp(logs, 1000, 300);
    expect(views['job-1'].start).toBe(1200);
    views = prependOlder(views, page(logs, 1000, 200)[0]);
    expect(views['job-1'].start).toBe(1000);
    expect(views['job-1'].lines).toEqual(lines('a', 1500).slice(1000));
    // A page that is not older than the view changes nothing.
    expect(prependOlder(views, page(logs, 1200, 100)[0])).toBe(views);
  });
});
