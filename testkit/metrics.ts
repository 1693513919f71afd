// Reads a Prometheus text exposition (GET /metrics) for tests and benchmarks: samples by name and labels.
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]] = l[2].replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

/** Sum of the samples named `name` whose labels include `labels` (0 when none). */
export const metricSum = (samples: Sample[], name: string, labels: Record<string, string> = {}): number =>
  samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((a, s) => a + s.value, 0);

/** GET <origin>/metrics, parsed; `apiUrl` may be the API's /api/v1 URL. */
export async function scrape(apiUrl: string): Promise<Sample[]> {
  const res = await fetch(apiUrl.replace(/\/api\/v1\/?$/, '') + '/metrics');
  if (!res.ok) throw new Error(`GET /metrics answered ${res.status}: ${await res.text()}`);
  return parseMetrics(await res.text());
}
