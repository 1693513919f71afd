// The driver's processes: spawned detached in their own session and process group, found again by
// that group after a worker restart, and stopped with the whole tree they started.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import { errCode } from './driver-files';

/** Time killDriver() gives the JVM's shutdown hooks after SIGTERM before SIGKILL. */
const TERM_GRACE_MS = 3_000;

/**
 * Runs spark-submit ("$@") in a shell that records its own pid first and spark-submit's exit code
 * last, each by rename so a reader never sees a half-written file. Paths are relative: the cwd is
 * the driver folder.
 */
const WRAPPER = [
  'echo $$ > pid.tmp && mv -f pid.tmp pid',
  '"$@"',
  'code=$?',
  'echo "$code" > exit.tmp && mv -f exit.tmp exit',
].join('\n');

/**
 * Starts the command (argv) detached in `dir` through WRAPPER, stdout and stderr appended to logFile.
 * Resolves once it has started, or with the error that kept it from starting.
 */
export async function spawnDriver(
  dir: string,
  argv: string[],
  env: NodeJS.ProcessEnv,
  logFile: string,
): Promise<Error | undefined> {
  const logFd = openSync(logFile, 'a');
  try {
    const child = spawn('/bin/sh', ['-c', WRAPPER, 'spark-driver', ...argv], {
      cwd: dir,
      // Own session and process group: the driver survives the worker, and remove() can signal the group.
      detached: true,
      stdio: ['ignore', logFd, logFd],
      env,
    });
    const spawnError = await new Promise<Error | undefined>((resolve) => {
      child.once('spawn', () => resolve(undefined));
      child.once('error', resolve);
    });
    if (!spawnError) child.unref();
    return spawnError;
  } finally {
    closeSync(logFd);
  }
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errCode(e) === 'EPERM';
  }
}

/**
 * Whether the driver's process group still has members. A group id can only be reused once its
 * group is empty, but after a reboot the number may lead someone else's group: where /proc shows the
 * leader, its working directory must be the driver folder.
 */
export async function groupAlive(pgid: number, dir: string): Promise<boolean> {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false; // ESRCH: gone; EPERM: another user's group, so not ours
  }
  try {
    const [cwd, real] = await Promise.all([fs.readlink(`/proc/${pgid}/cwd`), fs.realpath(dir)]);
    return cwd === real;
  } catch {
    // No /proc (then the signal's answer stands), or a leader that has ended: the group lives while a member
    // has not ended. Members that ended and wait for PID 1 to reap them (about a second here) do not count.
    const procs = await procTable();
    return procs === undefined || procs.some((p) => p.pgrp === pgid && p.state !== 'Z');
  }
}

type Proc = { pid: number; ppid: number; pgrp: number; state: string };

/** Every process from /proc (Linux); undefined where there is no /proc. */
async function procTable(): Promise<Proc[] | undefined> {
  let entries: string[];
  try {
    entries = (await fs.readdir('/proc')).filter((e) => /^\d+$/.test(e));
  } catch {
    return undefined;
  }
  const procs: Proc[] = [];
  await Promise.all(
    entries.map(async (e) => {
      try {
        const stat = await fs.readFile(`/proc/${e}/stat`, 'utf8');
        // Fields after the command name, which is in parentheses and may hold spaces.
        const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        procs.push({ pid: Number(e), state: rest[0], ppid: Number(rest[1]), pgrp: Number(rest[2]) });
      } catch {
        // ended while we looked
      }
    }),
  );
  return procs;
}

/** Pids of the group's members and all their descendants (Linux /proc; empty elsewhere). */
async function groupTree(pgid: number): Promise<number[]> {
  const procs = (await procTable()) ?? [];
  const tree = new Set(procs.filter((p) => p.pgrp === pgid).map((p) => p.pid));
  for (let grew = true; grew;) {
    grew = false;
    for (const p of procs) {
      if (!tree.has(p.pid) && tree.has(p.ppid)) {
        tree.add(p.pid);
        grew = true;
      }
    }
  }
  return [...tree];
}

const signal = (pid: number, sig: NodeJS.Signals): void => {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
};

/**
 * SIGTERM to the group (the JVM's shutdown hooks stop Spark), SIGKILL after the grace. Descendants
 * that left the group are signalled one by one: PySpark's worker daemon makes its own group.
 */
export async function killDriver(pgid: number, dir: string): Promise<void> {
  if (!(await groupAlive(pgid, dir))) return;
  const tree = await groupTree(pgid);
  signal(-pgid, 'SIGTERM');
  for (const pid of tree) signal(pid, 'SIGTERM');
  const allGone = async () => !(await groupAlive(pgid, dir)) && tree.every((pid) => !pidAlive(pid) || isZombie(pid));
  if (await waitUntilAsync(allGone, TERM_GRACE_MS)) return;
  const late = [...new Set([...tree, ...(await groupTree(pgid))])];
  signal(-pgid, 'SIGKILL');
  for (const pid of late) signal(pid, 'SIGKILL');
  await waitUntilAsync(allGone, 2_000);
}

function isZombie(pid: number): boolean {
  try {
    // A zombie has ended; only its parent's reaping is left.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false;
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function waitUntil(cond: () => boolean, timeoutMs: number): Promise<boolean> {
  return waitUntilAsync(async () => cond(), timeoutMs);
}

export async function waitUntilAsync(cond: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return true;
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
}
