// The closing line of `npm test` (scripts/test-summary.mjs), which CI reads as the run's verdict.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const dir = mkdtempSync(path.join(os.tmpdir(), 'test-summary-'));
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};
const summary = (...args: string[]) =>
  execFileSync(process.execPath, ['scripts/test-summary.mjs', ...args], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .at(-1);

const pytest = file('pytest.log', 'collected 5 items\n.....\n1 failed, 3 passed, 1 skipped in 2.01s\n');
const vitest = file(
  'vitest.json',
  JSON.stringify({ numPassedTests: 10, numFailedTests: 0, numPendingTests: 2, success: true }),
);

describe('the closing test line', () => {
  it('adds up both runners', () => {
    expect(summary(pytest, vitest)).toBe('tests: 13 passed, 1 failed, 3 skipped');
  });

  it('counts a runner that left no result (vitest killed, pytest cut off) as a failure, never as a pass', () => {
    expect(summary(pytest, path.join(dir, 'absent.json'))).toBe('tests: 3 passed, 2 failed, 1 skipped');
    expect(summary(file('cut.log', 'collected 5 items\n...'), vitest)).toBe('tests: 10 passed, 1 failed, 2 skipped');
  });

  it('fails a vitest run that failed outside any test', () => {
    const broken = file('broken.json', JSON.stringify({ numPassedTests: 4, numFailedTests: 0, success: false }));
    expect(summary(pytest, broken)).toBe('tests: 7 passed, 2 failed, 1 skipped');
  });
});
