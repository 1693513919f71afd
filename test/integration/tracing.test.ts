// Traces from an API request through the job workflow to the activity that calls the cluster adapter, all
// one trace, received by an OTLP/HTTP endpoint the test serves itself; log lines inside a span carry its id.
import { trace } from '@opentelemetry/api';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ClusterAdapter, DriverStatus } from '../../domain/driver';
import { logger, setLogSink } from '../../lib/log';
import { quietTemporal, startStack, type Stack } from '../../testkit/stack';
import { call, eventually, form } from '../harness';
import { consoleSink } from '../setup-logs';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
}

/** An OTLP/HTTP JSON receiver: every span posted to /v1/traces. */
function otlpReceiver() {
  const spans: OtlpSpan[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const doc = JSON.parse(body) as { resourceSpans?: { scopeSpans?: { spans?: OtlpSpan[] }[] }[] };
        for (const rs of doc.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []));
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return { server, spans };
}

/** A cluster whose drivers run at launch and succeed at the next look. */
const adapter = (): ClusterAdapter => {
  const launched = new Set<string>();
  return {
    launch: async (spec): Promise<DriverStatus> => {
      launched.add(spec.driverId);
      return { phase: 'RUNNING', startTime: Date.now() };
    },
    status: async (id): Promise<DriverStatus> =>
      launched.has(id) ? { phase: 'SUCCEEDED', exitCode: 0, endTime: Date.now() } : { phase: 'MISSING' },
    logs: async () => [],
    remove: async (id) => void launched.delete(id),
  };
};

let s: Stack;
const otlp = otlpReceiver();

beforeAll(async () => {
  quietTemporal();
  otlp.server.listen(0, '127.0.0.1');
  await new Promise((r) => otlp.server.once('listening', r));
  const port = (otlp.server.address() as AddressInfo).port;
  const id = randomUUID().slice(0, 8);
  const fake = adapter();
  s = await startStack({
    temporalAddress: inject('temporalAddress'),
    mongoUrl: inject('mongoUrl'),
    dir: path.join(inject('testDir'), id),
    id,
    prefix: 'test',
    env: { WATCH_INTERVAL_MS: '200', LOG_LEVEL: 'warn', OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` },
    bundle: { codePath: inject('bundlePath') },
    adapterFor: async () => fake,
  });
});
afterAll(async () => {
  await s?.stop();
  otlp.server.close();
});

describe('traces', () => {
  it('follow a submission from the API through the job workflow to the adapter-calling activity', async () => {
    const r = await call(
      s,
      'POST',
      '/job/submit',
      form(
        { name: 'traced', language: 'PYTHON', jobClass: 'main' },
        { pyFiles: [{ name: 'main.py', content: 'print(1)\n' }] },
      ),
    );
    expect(r.status).toBe(200);
    await eventually(
      async () => ((await call(s, 'GET', `/job/${r.body.jobId}`)).body.state === 'FINISHED' ? true : undefined),
      30_000,
    );
    const found = await eventually(async () => {
      const api = otlp.spans.find((x) => x.name === 'POST /api/v1/job/submit');
      if (!api) return undefined;
      const same = otlp.spans.filter((x) => x.traceId === api.traceId);
      const workflow = same.find((x) => x.name.startsWith('RunWorkflow:'));
      const activity = same.find((x) => x.name.startsWith('RunActivity:'));
      return workflow && activity ? { api, same, workflow, activity } : undefined;
    }, 20_000);
    expect(found.api.parentSpanId ?? '').toBe('');
    // The client's span (submit starts the workflow with an update), the workflow's, its activities'.
    expect(found.same.some((x) => /^(UpdateWith)?StartWorkflow:/.test(x.name))).toBe(true);
    expect(found.same.some((x) => x.name === 'RunActivity:launchDriver')).toBe(true);
    // Every span of the trace hangs from another span of it, up to the API's.
    const ids = new Set(found.same.map((x) => x.spanId));
    for (const x of found.same) if (x !== found.api) expect(ids.has(x.parentSpanId ?? '')).toBe(true);
  });

  it('puts the active trace id on log lines', () => {
    const lines: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) => (lines.push(String(chunk)), true)) as typeof process.stderr.write;
    let traceId = '';
    setLogSink(undefined); // the service's own sink, not the test setup's console
    try {
      trace.getTracer('test').startActiveSpan('logging', (span) => {
        traceId = span.spanContext().traceId;
        logger('tracing-test').warn('inside a span');
        span.end();
      });
    } finally {
      process.stderr.write = write;
      setLogSink(consoleSink);
    }
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(lines.join('')).toContain(`traceId=${traceId}`);
  });
});
