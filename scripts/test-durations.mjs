// Writes test/durations.json, each test file's seconds in a run, from that run's vitest report
// (test-output/vitest.json, kept by scripts/test.sh): test/sequencer.ts starts the longest files first.
//   npm run test:durations [report]
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const report = JSON.parse(readFileSync(process.argv[2] ?? path.join(root, 'test-output', 'vitest.json'), 'utf8'));
const out = {};
for (const f of report.testResults.toSorted((a, b) => a.name.localeCompare(b.name))) {
  out[path.relative(root, f.name).replace(/^.*?(?=test\/)/, '')] = Math.round((f.endTime - f.startTime) / 100) / 10;
}
writeFileSync(path.join(root, 'test', 'durations.json'), `${JSON.stringify(out, null, 2)}\n`);
process.stdout.write(`test/durations.json: ${Object.keys(out).length} files\n`);
