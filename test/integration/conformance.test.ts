// Schema-driven conformance: schemathesis (PyPI, from .stack/tools-venv) generates requests for every
// operation of the service's own OpenAPI document (GET /api/v1/openapi.json, the document the routes are
// declared with) and checks each answer: no 5xx, a status the document lists, a body valid against its
// schema. Real API, Temporal and MongoDB-protocol servers; drivers come from an adapter that launches
// nothing (they stay RUNNING), so fuzzed jobs and groups cost no Spark. Streams (SSE, never ending) are left out.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inject } from 'vitest';
import type { ClusterAdapter } from '../../domain/driver';
import { ROOT } from '../../lib/config';
import { quietTemporal, startStack, type Stack } from '../../testkit/stack';

const SCHEMATHESIS = path.join(ROOT, '.stack', 'tools-venv', 'bin', 'schemathesis');

/** Drivers that launch at once and run until removed; their log is one line. */
const idleCluster: ClusterAdapter = {
  launch: async () => ({ phase: 'RUNNING' }),
  status: async () => ({ phase: 'RUNNING' }),
  logs: async (driverId, range) => [
    {
      name: driverId,
      type: 'process',
      role: 'driver',
      state: 'RUNNING',
      from: range.from,
      logSize: 1,
      fileName: 'driver.log',
      log: ['started'],
    },
  ],
  remove: async () => undefined,
};

let s: Stack;

beforeAll(async () => {
  // Fuzzed SQL statements make engines fail to start on purpose: the SDK's warnings would flood the output.
  quietTemporal('ERROR');
  const id = randomUUID().slice(0, 8);
  s = await startStack({
    temporalAddress: inject('temporalAddress'),
    mongoUrl: inject('mongoUrl'),
    dir: path.join(inject('testDir'), id),
    id,
    prefix: 'conf',
    // Calls that wait for a driver, an engine or a Connect server that never answers give up fast.
    env: {
      LOG_LEVEL: 'error',
      EXECUTE_WAIT_MS: '1000',
      SQL_ENGINE_START_TIMEOUT_MS: '1000',
      CONNECT_START_TIMEOUT_MS: '1000',
    },
    bundle: { codePath: inject('bundlePath') },
    adapterFor: async () => idleCluster,
  });
});

afterAll(async () => {
  await s?.stop();
}, 120_000);

it('every operation of /api/v1/openapi.json answers without 5xx, with documented statuses and valid bodies', async () => {
  const origin = new URL(s.url).origin;
  const args = [
    'run',
    `${s.url}/openapi.json`,
    '--url',
    origin,
    '--checks',
    'not_a_server_error,status_code_conformance,response_schema_conformance',
    '--phases',
    'coverage,fuzzing',
    '--max-examples',
    process.env.CONFORMANCE_EXAMPLES ?? '3',
    '--exclude-path-regex',
    '/updates$',
    '--workers',
    '1',
    '--seed',
    '1',
    '--request-timeout',
    '20',
    '--no-color',
    '--suppress-health-check',
    'all',
    '--generation-database',
    'none',
  ];
  const run = await promisify(execFile)(SCHEMATHESIS, args, { timeout: 600_000, maxBuffer: 64 * 1024 * 1024 }).then(
    (r) => ({ code: 0, out: r.stdout + r.stderr }),
    (e: { code?: number; stdout?: string; stderr?: string }) => ({
      code: e.code ?? 1,
      out: `${e.stdout ?? ''}${e.stderr ?? ''}`,
    }),
  );
  // schemathesis's report ends in a pytest-style banner: it goes to a file, and into the log only with a failure.
  const report = path.join(ROOT, 'test-output', 'conformance', 'schemathesis.log');
  mkdirSync(path.dirname(report), { recursive: true });
  writeFileSync(report, run.out);
  if (run.code !== 0) console.log(`schemathesis failed (exit ${run.code}); its report (${report}):\n${run.out}`);
  // Every operation of the document but the streams was exercised.
  const doc = (await (await fetch(`${s.url}/openapi.json`)).json()) as { paths: Record<string, object> };
  const operations = Object.entries(doc.paths)
    .filter(([p]) => !p.endsWith('/updates'))
    .reduce((n, [, methods]) => n + Object.keys(methods).length, 0);
  expect(operations).toBeGreaterThan(50);
  expect(run.out).toMatch(new RegExp(`Tested: ${operations}\\b`));
  expect(run.code).toBe(0);
}, 660_000);
