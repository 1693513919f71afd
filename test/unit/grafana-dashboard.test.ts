// The Grafana dashboard in deploy/grafana queries only metrics the service exports: the API's registry
// (api/metrics/registry.ts), the adapter latency the worker records (activities/adapters/timed.ts), and the
// Temporal SDK's worker metrics.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createApiMetrics } from '../../api/metrics/registry';
import { ROOT } from '../../lib/config';

interface Panel {
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  targets: { expr: string }[];
}

const dashboard = JSON.parse(readFileSync(path.join(ROOT, 'deploy/grafana/spark-orchestrator.json'), 'utf8')) as {
  uid: string;
  panels: Panel[];
};

const FUNCTIONS = new Set(['histogram_quantile', 'label_replace', 'label_join']);
/** Metric names in a PromQL expression: what is left once label lists, matchers and ranges are cut out. */
const metricsOf = (expr: string): string[] =>
  [
    ...expr
      .replace(/\bby\s*\([^)]*\)/g, '')
      .replace(/\{[^}]*\}/g, '')
      .replace(/\[[^\]]*\]/g, '')
      .matchAll(/\b[a-z][a-z0-9]*_[a-z0-9_]*\b/g),
  ]
    .map((m) => m[0])
    .filter((n) => !FUNCTIONS.has(n));

describe('the Grafana dashboard', () => {
  it('queries only metrics the API, the adapters or the Temporal SDK export', async () => {
    const api = await createApiMetrics().registry.getMetricsAsJSON();
    const histogramSeries = (n: string) => [`${n}_bucket`, `${n}_count`, `${n}_sum`];
    const known = new Set(api.flatMap((m) => (String(m.type) === 'histogram' ? histogramSeries(m.name) : [m.name])));
    for (const n of histogramSeries('spark_adapter_call_duration')) known.add(n);
    const used = dashboard.panels.flatMap((p) => p.targets.flatMap((t) => metricsOf(t.expr)));
    expect(used).toContain('spark_jobs');
    expect(used.length).toBeGreaterThan(10);
    const unknown = used.filter((n) => !known.has(n) && !n.startsWith('temporal_'));
    expect(unknown).toEqual([]);
  });

  it('lays its panels out without overlaps', () => {
    const cells = new Set<string>();
    for (const p of dashboard.panels) {
      for (let x = p.gridPos.x; x < p.gridPos.x + p.gridPos.w; x++)
        for (let y = p.gridPos.y; y < p.gridPos.y + p.gridPos.h; y++) {
          expect(cells.has(`${x},${y}`), `${p.title} overlaps at ${x},${y}`).toBe(false);
          cells.add(`${x},${y}`);
        }
    }
    expect(dashboard.uid).toBe('spark-orchestrator');
  });
});
