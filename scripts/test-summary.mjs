// The closing line of `npm test`: "tests: N passed, N failed[, N skipped]", the runner's pytest and vitest added
// up. CI tools read a run's last lines for a count they know; vitest's own summary ("Tests  612 passed (612)")
// is not one of them, and this plain form is.
//
//   node scripts/test-summary.mjs <pytest log> <vitest json report>
import { existsSync, readFileSync } from 'node:fs';
import process from 'node:process';

const [pytestLog, vitestJson] = process.argv.slice(2);
const total = { passed: 0, failed: 0, skipped: 0 };

// A runner that wrote no result (killed, out of memory, crashed before its summary) counts as one failure: the
// line must never read as a pass with that runner's tests missing.
const missing = (what, file) => {
  process.stdout.write(`${what} left no result (${file}): counted as a failure\n`);
  total.failed += 1;
};

// pytest -q closes with e.g. "1 failed, 71 passed, 1 skipped in 112.09s (0:01:52)".
if (pytestLog && !existsSync(pytestLog)) missing("the runner's pytest", pytestLog);
if (pytestLog && existsSync(pytestLog)) {
  const lines = readFileSync(pytestLog, 'utf8').trim().split('\n');
  const closing = lines.reverse().find((l) => /^\d+ \w+.* in [\d.]+s/.test(l)) ?? '';
  if (!closing) missing("the runner's pytest", pytestLog);
  for (const [, n, what] of closing.matchAll(/(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)/g)) {
    if (what === 'passed' || what === 'xpassed') total.passed += Number(n);
    else if (what === 'skipped' || what === 'xfailed') total.skipped += Number(n);
    else total.failed += Number(n);
  }
}

if (vitestJson && !existsSync(vitestJson)) missing('vitest', vitestJson);

// vitest's JSON reporter: counts over every test of every project.
if (vitestJson && existsSync(vitestJson)) {
  const r = JSON.parse(readFileSync(vitestJson, 'utf8'));
  total.passed += r.numPassedTests ?? 0;
  // A file that failed to load, or an error thrown outside any test, fails the run with no failed test.
  total.failed += r.numFailedTests || (r.success === false ? Math.max(1, r.numFailedTestSuites ?? 0) : 0);
  total.skipped += (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
}

const skipped = total.skipped ? `, ${total.skipped} skipped` : '';
process.stdout.write(`tests: ${total.passed} passed, ${total.failed} failed${skipped}\n`);
