// Live processes and process groups, from /proc (Linux), for tests that check a driver leaves nothing running.
// A zombie has ended and counts as gone: only its parent's reaping is left, and on these machines PID 1
// (firecracker's process_api) reaps an orphan about a second after it ends.
import { readdirSync, readFileSync } from 'node:fs';
import { sleep } from './wait';

/** The fields after the command name (which is in parentheses and may hold spaces): state, ppid, pgrp, … */
function statFields(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined; // ended while we looked
  }
}

/** Whether a process exists and has not ended (a zombie has). */
export function alive(pid: number): boolean {
  const fields = statFields(pid);
  return fields !== undefined && fields[0] !== 'Z';
}

/** The live members of a process group (a driver's wrapper leads one; the JVM is in it). */
export function groupMembers(pgid: number): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      const fields = statFields(e);
      return fields !== undefined && fields[0] !== 'Z' && Number(fields[2]) === pgid;
    })
    .map(Number);
}

/**
 * Resolves once none of `pids` and no member of the group `pgid` is running: what a removed driver must not leave
 * (a process forked late into its group counts too). Else rejects naming those still running.
 */
export async function noneRunning(pids: number[], pgid: number, timeoutMs: number): Promise<void> {
  const left = () => [...new Set([...pids.filter(alive), ...groupMembers(pgid)])];
  const deadline = Date.now() + timeoutMs;
  while (left().length > 0) {
    if (Date.now() > deadline)
      throw new Error(`still running ${timeoutMs} ms after remove: ${left().map(describe).join(', ')}`);
    await sleep(100);
  }
}

/** "pid (command, state S, parent P)" for a message. */
function describe(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid] = statFields(pid) ?? [];
    return `${pid} (${stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))}, state ${state}, parent ${ppid})`;
  } catch {
    return `${pid} (ended)`;
  }
}
