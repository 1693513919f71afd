// What benchmarks read of processes and files on Linux: CPU ticks of a process tree, a process by its command
// line, a file's size.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { round } from '../testkit/stats';

export const TICKS = 100; // USER_HZ on Linux

/** A process and all its descendants, with each one's utime + stime in clock ticks. */
function processTree(root: number): Map<number, number> {
  const parent = new Map<number, number>();
  const ticks = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parent.set(Number(d), Number(f[1]));
      ticks.set(Number(d), Number(f[11]) + Number(f[12]));
    } catch {
      // gone meanwhile
    }
  }
  const tree = new Map<number, number>();
  for (const [pid, t] of ticks) {
    for (let p: number | undefined = pid; p && p > 1; p = parent.get(p))
      if (p === root) {
        tree.set(pid, t);
        break;
      }
  }
  return tree;
}

/** utime + stime of a process and all its descendants, in clock ticks. */
export function treeTicks(root: number): number {
  let sum = 0;
  for (const t of processTree(root).values()) sum += t;
  return sum;
}

/**
 * utime + stime of each thread of a process tree in clock ticks, summed by the thread's name with its digits
 * taken out ("C2 CompilerThread0" and "…1" together; a JVM names its threads, Linux keeps their first 15 bytes).
 * A thread that ended takes its ticks with it.
 */
export function threadTicksByName(root: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const pid of processTree(root).keys()) {
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue; // gone
    }
    for (const tid of tids) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const open = stat.indexOf('(');
        const close = stat.lastIndexOf(')');
        const name =
          stat
            .slice(open + 1, close)
            .replace(/[\d#-]+$/, '')
            .replace(/\d+/g, 'N') || '?';
        const f = stat.slice(close + 2).split(' ');
        out.set(name, (out.get(name) ?? 0) + Number(f[11]) + Number(f[12]));
      } catch {
        // ended meanwhile
      }
    }
  }
  return out;
}

/** Resident set size of a process in MiB (Linux /proc). */
export const rssMiB = (pid: number): number => {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : NaN;
  } catch {
    return NaN; // gone
  }
};

/** Processes whose command line names the folder (Temporal's and MongoDB's data files are in it). */
export function pidsMentioning(text: string, what: string): number {
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      if (cmd.includes(text) && cmd.includes(what)) return Number(d);
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`no process of ${what} mentions ${text}`);
}

export const sizeMb = (file: string) => {
  try {
    return round(statSync(file).size / 2 ** 20, 1);
  } catch {
    return 0;
  }
};
