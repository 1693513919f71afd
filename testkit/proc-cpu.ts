// CPU time of processes from /proc (Linux): what benchmarks divide by the work done, per process. A process's
// utime + stime in clock ticks (USER_HZ, 100 on Linux), read from /proc/<pid>/stat.
import { readdirSync, readFileSync } from 'node:fs';

/** Linux's USER_HZ: every architecture Node runs on uses 100. */
const TICKS_PER_SECOND = 100;

/** CPU milliseconds (user + system) the process has used so far; undefined when it is gone. */
export function cpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces: count fields from after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return ((utime + stime) * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** The first process whose command line has an argument equal to (or ending with) `arg`, e.g. a port. */
export function pidWithArg(arg: string, name?: RegExp): number | undefined {
  for (const d of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(d)) continue;
    try {
      const args = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      if (name && !name.test(args[0] ?? '')) continue;
      if (args.some((a) => a === arg || a.endsWith(`=${arg}`) || a.endsWith(`:${arg}`))) return Number(d);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

/** CPU milliseconds of each named process since `snapshot` was taken. */
export function cpuSnapshot(pids: Record<string, number | undefined>) {
  const at = () => Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, pid ? cpuMs(pid) : undefined]));
  const start = at();
  return {
    /** CPU ms used since the snapshot, per name (undefined: unknown process, or gone). */
    used(): Record<string, number | undefined> {
      const now = at();
      return Object.fromEntries(
        Object.keys(pids).map((k) => [
          k,
          now[k] !== undefined && start[k] !== undefined ? now[k]! - start[k]! : undefined,
        ]),
      );
    },
  };
}
