// A TRINO_HOME for tests: the installed Trino (scripts/setup.sh), launched with the C1 compiler alone, as the
// tests' Spark JVMs are (testkit/jvm-options.ts). The service writes Trino's jvm.config itself (G1 and C2: right
// for a long-lived engine, and the same on k8s); Trino's launcher also takes JVM options as -J arguments, which
// come after jvm.config's. This home's bin/launcher.py execs the installed one with them, so the process the
// local adapter started is Trino's JVM, as without it. Measured (Trino 368, start until /v1/info stops saying
// starting, then tpch and memory-catalog statements, 2 cores under load 10-13): 17-34 s and 17 CPU-seconds
// with C2, 5-9 s and 8-10 CPU-seconds with C1 alone. The serial collector is left out: it cannot follow
// jvm.config's -XX:+UseG1GC, and gained nothing measurable.
import { existsSync, mkdirSync, readlinkSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const TRINO_TEST_JVM_OPTIONS = ['-XX:TieredStopAtLevel=1'];

/**
 * Writes the test home into `dir` (idempotent) and returns it; returns `installed` itself when Trino is not
 * installed there, so the "not installed" paths behave as without this.
 */
export function trinoTestHome(dir: string, installed: string): string {
  const launcher = path.join(installed, 'bin', 'launcher.py');
  if (!existsSync(launcher)) return installed;
  const bin = path.join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const script = [
    '# Written by testkit/trino.ts: the installed Trino launcher, with the test JVM options after jvm.config.',
    'import os, sys',
    `launcher = ${JSON.stringify(launcher)}`,
    `extra = ${JSON.stringify(TRINO_TEST_JVM_OPTIONS.map((o) => `-J${o}`))}`,
    'os.execv(sys.executable, [sys.executable, launcher] + sys.argv[1:] + extra)',
    '',
  ].join('\n');
  // Renamed into place: test files in other workers may read it meanwhile.
  const tmp = path.join(bin, `launcher.py.${process.pid}`);
  writeFileSync(tmp, script);
  renameSync(tmp, path.join(bin, 'launcher.py'));
  // What the tests look for to tell whether Trino is installed.
  const link = path.join(bin, 'launcher');
  const target = path.join(installed, 'bin', 'launcher');
  if (!existsSync(link) || readlinkSync(link) !== target) {
    const tmpLink = `${link}.${process.pid}`;
    symlinkSync(target, tmpLink);
    renameSync(tmpLink, link);
  }
  return dir;
}
