// Test harness of the integration and e2e files: the real API on a free port and, unless a file starts
// its own, a real worker in-process, against the Temporal and MongoDB servers of test/global-setup.ts.
// Each harness gets its own database and task queue, so files can run side by side.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { inject } from 'vitest';
import { request, type Reply } from '../testkit/http';
import type { ClusterAdapter } from '../domain/driver';
import { quietTemporal, startStack, type Stack } from '../testkit/stack';

export { form } from '../testkit/http';
export { eventually } from '../testkit/wait';

export type Harness = Stack;

export async function startHarness(
  opts: {
    worker?: boolean;
    env?: Record<string, string>;
    /** Replaces the cluster adapters of the API (and of the harness's worker): no Spark, no Kubernetes. */
    adapterFor?: (clusterName: string) => Promise<ClusterAdapter>;
  } = {},
): Promise<Harness> {
  quietTemporal();
  const id = randomUUID().slice(0, 8);
  return startStack({
    temporalAddress: inject('temporalAddress'),
    mongoUrl: inject('mongoUrl'),
    dir: path.join(inject('testDir'), id),
    id,
    prefix: 'test',
    env: { WATCH_INTERVAL_MS: '200', LOG_LEVEL: 'warn', CONSOLE_DIR: inject('consoleDir'), ...opts.env },
    worker: opts.worker === false ? 'none' : 'in-process',
    bundle: { codePath: inject('bundlePath') },
    adapterFor: opts.adapterFor,
  });
}

/** fetch + JSON against the harness's API; returns status and parsed body. */
export const call = (
  h: Pick<Harness, 'url'>,
  method: string,
  p: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> => request(h.url, method, p, body, headers);
