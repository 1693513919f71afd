// Statistics and result lines of the benchmarks: percentiles, tables in ms, targets, a machine line and
// a final machine-readable line.
import os from 'node:os';

export interface Stats {
  n: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of sorted values. */
const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];

export function stats(values: number[]): Stats {
  if (values.length === 0) return { n: 0, min: NaN, p50: NaN, p90: NaN, p99: NaN, max: NaN, mean: NaN };
  const s = [...values].sort((a, b) => a - b);
  return {
    n: s.length,
    min: s[0],
    p50: pct(s, 50),
    p90: pct(s, 90),
    p99: pct(s, 99),
    max: s[s.length - 1],
    mean: s.reduce((a, b) => a + b, 0) / s.length,
  };
}

export const round = (v: number, digits = 1) => Math.round(v * 10 ** digits) / 10 ** digits;

/** The median: the middle value, or the mean of the two middle ones (stats().p50 is the lower one). */
export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2;
}

const fmt = (v: number) => (Number.isNaN(v) ? '-' : v >= 100 ? v.toFixed(0) : v.toFixed(1));

/** Prints a table of latency distributions, in ms. */
export function printStats(title: string, rows: [label: string, values: number[]][]): void {
  const width = Math.max(10, ...rows.map(([l]) => l.length));
  console.log(`\n${title}`);
  console.log(
    `  ${'ms'.padEnd(width)} ${['n', 'min', 'p50', 'p90', 'p99', 'max', 'mean'].map((h) => h.padStart(7)).join(' ')}`,
  );
  for (const [label, values] of rows) {
    const s = stats(values);
    console.log(
      `  ${label.padEnd(width)} ${[String(s.n), fmt(s.min), fmt(s.p50), fmt(s.p90), fmt(s.p99), fmt(s.max), fmt(s.mean)].map((c) => c.padStart(7)).join(' ')}`,
    );
  }
}

/** Prints a target line: the figure, the bound, and whether it was met. */
export function printTarget(what: string, value: number, op: '<' | '>', bound: number, unit: string): boolean {
  const met = op === '<' ? value < bound : value > bound;
  console.log(`  target ${what} ${op} ${bound} ${unit}: measured ${fmt(value)} ${unit}  ${met ? 'MET' : 'NOT MET'}`);
  return met;
}

/** One line naming the machine, for the results table. */
export function printHeader(name: string): void {
  const cpus = os.cpus();
  const [l1, l5] = os.loadavg();
  console.log(
    `# ${name}  ${new Date().toISOString()}  node ${process.version}  ${cpus.length} CPUs (${cpus[0]?.model.trim() ?? '?'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, load ${l1.toFixed(1)}/${l5.toFixed(1)}`,
  );
  // Everything here (Temporal, MongoDB, API, worker, drivers) shares the CPUs; other work skews the figures.
  if (l1 > cpus.length / 2)
    console.log(
      `  note: load average ${l1.toFixed(1)} on ${cpus.length} CPUs before the start; other processes will skew the figures`,
    );
}

/** A final machine-readable line (`BENCH {...}`) for scripts that collect results. */
export function printJson(name: string, figures: Record<string, unknown>): void {
  console.log(
    `\nBENCH ${JSON.stringify({ bench: name, date: new Date().toISOString(), cpus: os.cpus().length, load1: round(os.loadavg()[0], 2), ...figures })}`,
  );
}
