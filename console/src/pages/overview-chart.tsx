// Two small SVG charts for the overview, drawn by hand (no chart library): a bar chart of stacked series per
// time bucket, and a line of values in order (execution latencies). Both have a fixed size (the viewBox scales
// with the page's width; CSS reserves the space before data arrives, so nothing jumps), axes with labels, a
// <title> and <desc> for screen readers, and the same figures as a table under a "Data" disclosure.
import type { ComponentChildren, RefObject } from 'preact';
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { formatDuration } from '../ui';

const H = 220;
const PAD = { left: 52, right: 14, top: 12, bottom: 30 };
const PLOT_H = H - PAD.top - PAD.bottom;

/** The chart's width in CSS pixels (drawn 1:1, so labels keep their size on a phone); the height is fixed. */
function useWidth(): [RefObject<HTMLElement>, number] {
  const ref = useRef<HTMLElement>(null);
  const [width, setWidth] = useState(640);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const measure = () => setWidth(Math.max(280, Math.round(el.clientWidth)));
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return [ref, width];
}

/** Round tick values from 0 to at least `max` (about `count` steps of 1, 2 or 5 × 10^n). */
export function niceTicks(max: number, count = 4, integer = false): number[] {
  if (!(max > 0)) return [0, 1];
  const raw = Math.max(max / count, integer ? 1 : 0);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const ticks: number[] = [];
  for (let v = 0; v < max + step; v += step) ticks.push(v);
  return ticks;
}

function Frame({
  id,
  title,
  desc,
  yTicks,
  yFormat,
  children,
  legend,
  table,
  width: W,
  figRef,
}: {
  width: number;
  figRef: RefObject<HTMLElement>;
  id: string;
  title: string;
  desc: string;
  yTicks: number[];
  yFormat: (v: number) => string;
  children: ComponentChildren;
  legend?: ComponentChildren;
  table: ComponentChildren;
}) {
  const top = yTicks[yTicks.length - 1];
  const y = (v: number) => PAD.top + PLOT_H - (v / top) * PLOT_H;
  return (
    <figure class="chart" ref={figRef}>
      <svg viewBox={`0 0 ${W} ${H}`} width={W} height={H} role="img" aria-labelledby={`${id}-title ${id}-desc`}>
        <title id={`${id}-title`}>{title}</title>
        <desc id={`${id}-desc`}>{desc}</desc>
        {yTicks.map((t) => (
          <g key={t} class="tick">
            <line x1={PAD.left} x2={W - PAD.right} y1={y(t)} y2={y(t)} />
            <text x={PAD.left - 6} y={y(t) + 4} text-anchor="end">
              {yFormat(t)}
            </text>
          </g>
        ))}
        <line class="axis" x1={PAD.left} x2={W - PAD.right} y1={PAD.top + PLOT_H} y2={PAD.top + PLOT_H} />
        {children}
      </svg>
      {legend && <figcaption class="legend">{legend}</figcaption>}
      <details class="chart-data">
        <summary>Data</summary>
        {table}
      </details>
    </figure>
  );
}

export interface Series {
  name: string;
  /** CSS class of its bars (colour). */
  class: string;
  /** Series of the same stack are stacked; different stacks stand side by side. */
  stack: string;
}

export interface Bucket {
  label: string;
  /** One value per series, in the order of `series`. */
  values: number[];
}

/** Stacked bars per bucket; x labels every `labelEvery` buckets. */
export function BarChart({
  id,
  title,
  series,
  buckets,
  labelEvery = 3,
}: {
  id: string;
  title: string;
  series: Series[];
  buckets: Bucket[];
  labelEvery?: number;
}) {
  const [figRef, W] = useWidth();
  const PLOT_W = W - PAD.left - PAD.right;
  const stacks = [...new Set(series.map((s) => s.stack))];
  const stackTotals = buckets.map((b) =>
    stacks.map((st) => series.reduce((sum, s, i) => sum + (s.stack === st ? b.values[i] : 0), 0)),
  );
  const ticks = niceTicks(Math.max(1, ...stackTotals.flat()), 4, true);
  const top = ticks[ticks.length - 1];
  const slot = PLOT_W / Math.max(1, buckets.length);
  // Labels at least 40 px apart, whatever the width.
  const every = Math.max(labelEvery, Math.ceil(40 / slot));
  const barW = Math.max(2, (slot * 0.8) / stacks.length);
  const y = (v: number) => PAD.top + PLOT_H - (v / top) * PLOT_H;
  const total = series.map((_, i) => buckets.reduce((sum, b) => sum + b.values[i], 0));
  const desc = `${buckets.length} buckets from ${buckets[0]?.label ?? ''} to ${buckets[buckets.length - 1]?.label ?? ''}. Totals: ${series.map((s, i) => `${s.name} ${total[i]}`).join(', ')}.`;
  return (
    <Frame
      width={W}
      figRef={figRef}
      id={id}
      title={title}
      desc={desc}
      yTicks={ticks}
      yFormat={String}
      legend={series.map((s, i) => (
        <span key={s.name} class="legend-item">
          <span class={`swatch ${s.class}`} aria-hidden="true" />
          {s.name} <span class="num">{total[i]}</span>
        </span>
      ))}
      table={
        <table>
          <thead>
            <tr>
              <th scope="col">bucket</th>
              {series.map((s) => (
                <th key={s.name} scope="col" class="num">
                  {s.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {buckets.map((b) => (
              <tr key={b.label}>
                <th scope="row">{b.label}</th>
                {b.values.map((v, i) => (
                  <td key={series[i].name} class="num">
                    {v}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      }
    >
      {buckets.map((b, bi) => {
        const x0 = PAD.left + bi * slot + slot * 0.1;
        return (
          <g key={b.label}>
            {stacks.map((st, si) => {
              let base = 0;
              return series.map((s, i) => {
                if (s.stack !== st || !b.values[i]) return null;
                const from = base;
                base += b.values[i];
                return (
                  <rect
                    key={s.name}
                    class={`bar ${s.class}`}
                    x={x0 + si * barW}
                    width={barW - 1}
                    y={y(base)}
                    height={Math.max(1, y(from) - y(base))}
                  >
                    <title>{`${b.label}: ${s.name} ${b.values[i]}`}</title>
                  </rect>
                );
              });
            })}
            {bi % every === 0 && (
              <text class="xlabel" x={x0 + (barW * stacks.length) / 2} y={H - 10} text-anchor="middle">
                {b.label}
              </text>
            )}
          </g>
        );
      })}
    </Frame>
  );
}

export interface Point {
  /** Label of the point (its time), shown on hover and in the table. */
  label: string;
  value: number;
}

/** Values in order, as a line with dots; y in milliseconds. */
export function LineChart({ id, title, points }: { id: string; title: string; points: Point[] }) {
  const [figRef, W] = useWidth();
  const PLOT_W = W - PAD.left - PAD.right;
  const ticks = niceTicks(Math.max(1, ...points.map((p) => p.value)), 4, true);
  const top = ticks[ticks.length - 1];
  const step = PLOT_W / Math.max(1, points.length - 1);
  const x = (i: number) => PAD.left + (points.length === 1 ? PLOT_W / 2 : i * step);
  const y = (v: number) => PAD.top + PLOT_H - (v / top) * PLOT_H;
  const sorted = points.map((p) => p.value).sort((a, b) => a - b);
  // Nearest rank: the smallest value with at least q of all values at or below it.
  const pct = (q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)];
  const desc = points.length
    ? `${points.length} executions; median ${formatDuration(pct(0.5))}, 95th percentile ${formatDuration(pct(0.95))}, longest ${formatDuration(sorted[sorted.length - 1])}.`
    : 'No completed executions yet.';
  const labels = points.length ? [0, Math.floor((points.length - 1) / 2), points.length - 1] : [];
  return (
    <Frame
      width={W}
      figRef={figRef}
      id={id}
      title={title}
      desc={desc}
      yTicks={ticks}
      yFormat={(v) => (v >= 1000 ? `${v / 1000} s` : `${v} ms`)}
      legend={<span class="muted">{desc}</span>}
      table={
        <table>
          <thead>
            <tr>
              <th scope="col">ended</th>
              <th scope="col" class="num">
                latency
              </th>
            </tr>
          </thead>
          <tbody>
            {points.map((p, i) => (
              <tr key={i}>
                <th scope="row">{p.label}</th>
                <td class="num">{formatDuration(p.value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      }
    >
      {points.length === 0 && (
        <text class="nodata" x={PAD.left + PLOT_W / 2} y={PAD.top + PLOT_H / 2} text-anchor="middle">
          no completed executions yet
        </text>
      )}
      {points.length > 1 && (
        <polyline class="line" points={points.map((p, i) => `${x(i)},${y(p.value)}`).join(' ')} fill="none" />
      )}
      {points.map((p, i) => (
        <circle key={i} class="dot" cx={x(i)} cy={y(p.value)} r={points.length > 60 ? 2 : 3.5}>
          <title>{`${p.label}: ${formatDuration(p.value)}`}</title>
        </circle>
      ))}
      {[...new Set(labels)].map((i) => (
        <text
          key={`l${i}`}
          class="xlabel"
          x={x(i)}
          y={H - 10}
          text-anchor={
            i === 0 && points.length > 1 ? 'start' : i === points.length - 1 && points.length > 1 ? 'end' : 'middle'
          }
        >
          {points[i].label}
        </text>
      ))}
    </Frame>
  );
}
