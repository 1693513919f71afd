// The log view's bookkeeping, kept apart from the component so it can be tested alone: per resource, a window
// of lines and its offset in the whole log, grown from the pages GET /job/{id}/logs returns (`from`, `log`).
import type { JobLogEntry } from '../types';

export interface LogView {
  name: string;
  role: string;
  state: string;
  fileName: string;
  /** Offset of lines[0] in the whole log. */
  start: number;
  lines: string[];
}
export type Views = Record<string, LogView>;

export const end = (v: LogView) => v.start + v.lines.length;

/**
 * Adds what a response holds beyond what the view has; a page that leaves a gap is ignored. A resource new to
 * the view starts at line 0, so its first lines are read next even when it shows up in a later page.
 */
export function merge(views: Views, entries: JobLogEntry[], keep = Infinity): Views {
  const out: Views = { ...views };
  for (const e of entries) {
    const old = out[e.name] ?? {
      name: e.name,
      role: e.role,
      state: e.state,
      fileName: e.fileName,
      start: 0,
      lines: [],
    };
    const base = { ...old, role: e.role, state: e.state, fileName: e.fileName };
    if (e.from > end(old)) {
      out[e.name] = base;
      continue;
    }
    let lines = [...old.lines, ...e.log.slice(end(old) - e.from)];
    let start = old.start;
    if (lines.length > keep) {
      start += lines.length - keep;
      lines = lines.slice(lines.length - keep);
    }
    out[e.name] = { ...base, start, lines };
  }
  return out;
}

/** Phases of a driver or pod that will write no more lines. */
const FINISHED_PHASES = new Set(['SUCCEEDED', 'FAILED', 'MISSING', 'Succeeded', 'Failed']);

/** Where the next tail read starts: the earliest end among logs still written to (else the furthest end). */
export function pollFrom(views: Views): number {
  const all = Object.values(views);
  const open = all.filter((v) => !FINISHED_PHASES.has(v.state));
  return open.length ? Math.min(...open.map(end)) : Math.max(0, ...all.map(end));
}

/** Puts the lines of an older page (read from `e.from` up to the view's start) before the view's lines. */
export function prependOlder(views: Views, e: JobLogEntry): Views {
  const v = views[e.name];
  if (!v || e.from >= v.start) return views;
  const older = e.log.slice(0, v.start - e.from);
  return { ...views, [e.name]: { ...v, start: e.from, lines: [...older, ...v.lines] } };
}
