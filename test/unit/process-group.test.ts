// groupAlive: a driver's process group lives while a member has not ended. A member that has ended and waits for
// its reaping (a zombie) does not count: on these machines PID 1 reaps an orphan about a second late, and remove()
// and status() must not wait for that.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { groupAlive } from '../../activities/adapters/local/process';
import { eventually } from '../../testkit/wait';

const dir = mkdtempSync(path.join(os.tmpdir(), 'process-group-'));
const parents: ChildProcess[] = [];

afterAll(() => {
  for (const p of parents) p.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const state = (pid: number): string | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
};

/**
 * A parent (outside the group, which never reaps) forks a child that leads a new process group in `dir`. The
 * child runs `childScript` (Python) and exits; the parent prints the child's pid and sleeps.
 */
async function groupFrom(childScript: string): Promise<number> {
  const py = [
    'import os, sys, time',
    'pid = os.fork()',
    'if pid == 0:',
    '    os.setpgid(0, 0)',
    ...childScript.split('\n').map((l) => `    ${l}`),
    '    os._exit(0)',
    'print(pid, flush=True)',
    'time.sleep(60)',
  ].join('\n');
  const parent = spawn('python3', ['-c', py], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] });
  parents.push(parent);
  const line = await new Promise<string>((resolve) => parent.stdout!.once('data', (d: Buffer) => resolve(String(d))));
  return Number(line.trim());
}

describe.runIf(process.platform === 'linux')('groupAlive', () => {
  it('is false for a group whose only member has ended and waits to be reaped', async () => {
    const leader = await groupFrom('pass');
    await eventually(async () => state(leader) === 'Z', 5_000, 20);
    expect(() => process.kill(-leader, 0)).not.toThrow(); // the kernel still knows the group
    expect(await groupAlive(leader, dir)).toBe(false);
  });

  it('is true while a member lives after its leader has ended', async () => {
    // The child forks a grandchild in its group that outlives it.
    const leader = await groupFrom('if os.fork() == 0:\n    time.sleep(60)');
    await eventually(async () => state(leader) === 'Z', 5_000, 20);
    expect(await groupAlive(leader, dir)).toBe(true);
    process.kill(-leader, 'SIGKILL');
    await eventually(async () => !(await groupAlive(leader, dir)), 5_000, 20);
  });

  it('is true for a group whose leader runs in the driver folder, false elsewhere', async () => {
    const leader = await groupFrom('time.sleep(60)');
    await eventually(async () => state(leader) === 'S', 5_000, 20);
    expect(await groupAlive(leader, dir)).toBe(true);
    expect(await groupAlive(leader, os.tmpdir())).toBe(false);
    process.kill(-leader, 'SIGKILL');
  });
});
