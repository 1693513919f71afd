// Runs the benchmarks one after another, each in its own process (each starts and stops its own stack):
//   npm run bench                    all of them
//   npm run bench -- submit k8s      some of them (submit, k8s, group, schedule, startup, sql)
// Exits non-zero if any benchmark failed (a missed target is not a failure; the figures say so).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const DIR = path.dirname(fileURLToPath(import.meta.url));
const ALL: Record<string, string> = {
  submit: 'submit.ts',
  k8s: 'k8s-throughput.ts',
  group: 'group-execute.ts',
  schedule: 'schedule-delay.ts',
  startup: 'startup.ts',
  sql: 'sql.ts',
};

const names = process.argv.slice(2);
const unknown = names.filter((n) => !(n in ALL));
if (unknown.length) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; choose from ${Object.keys(ALL).join(', ')}`);
  process.exit(2);
}
const failed: string[] = [];
for (const name of names.length ? names : Object.keys(ALL)) {
  console.log(`\n════════ ${name} ════════`);
  const r = spawnSync(process.execPath, [...process.execArgv, path.join(DIR, ALL[name])], {
    stdio: 'inherit',
    env: process.env,
  });
  if (r.status !== 0) failed.push(`${name} (exit ${r.status ?? r.signal})`);
}
if (failed.length) {
  console.error(`\nfailed: ${failed.join(', ')}`);
  process.exit(1);
}
