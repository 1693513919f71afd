// Copies a test log from stdin to stdout, withholding any line that looks like a test runner's closing
// summary unless it is the summary of the runner this part of the log belongs to (--allow pytest|vitest).
// Tools that judge a CI log read those lines: a nested tool's report printed through a test (schemathesis
// ends with a pytest-style "=== 2 warnings in 66s ===") once made a run of 688 tests read as "no test ran".
// Tests print nested tools' output only when they fail (vitest.config.ts `silent: 'passed-only'`); this is
// the guard behind that rule. What it withheld is counted at the end, so the log says that it happened.
import process from 'node:process';
import { createInterface } from 'node:readline';

/** Closing lines of the runners that CI log readers know, and of the plain `N passed, N failed` line. */
export const SUMMARY_PATTERNS = [
  /^=+ .*\b(passed|failed|errors?|skipped|warnings?|deselected|xfailed|xpassed|no tests ran)\b.* =+$/i, // pytest banner
  /^\s*(\d+ (passed|failed|errors?|skipped|warnings?|deselected|xfailed|xpassed),? ?)+ in [\d.]+s/i, // pytest -q
  /\bno tests ran\b/i,
  /\b\d+ passed, \d+ failed\b/i, // the plain line
  /^(ok|FAIL)\s+\S+\s+[\d.]+s\b/, // go test
  /^(PASS|FAIL)$/,
  /^DONE \d+ tests?\b/, // gotestsum
  /^test result: (ok|FAILED)\./, // cargo test
  /^\s*Summary \[.*\] \d+ tests? run/, // nextest
  /^[#ℹ] (tests|pass|fail|suites) \d+$/, // node's test runner
  /Tests run: \d+, Failures: \d+/, // Maven Surefire
  /\d+% tests passed, \d+ tests? failed out of \d+/, // ctest
  /^Files=\d+, Tests=\d+/, // prove
  /^Result: (PASS|FAIL)/,
  /^\d+ examples?, \d+ failures?/, // RSpec
  /^\d+ tests?, \d+ failures?/, // ExUnit
  /^\d+ runs, \d+ assertions/, // minitest
  /All \d+ tests passed/, // EUnit
  /Failed: \d+\.\s+Skipped: \d+\.\s+Passed: \d+/,
  /^OK \(\d+ tests?, \d+ assertions?\)/, // PHPUnit
  /^Tests: \d+, Assertions: \d+/,
  /\d+ of \d+ test suites/, // cabal
  /^Ran: \d+ tests in:/, // OUnit
  /Synthesis: Tested: \d+/, // Criterion
  /^\[\s*(PASSED|FAILED)\s*\] \d+ tests?/, // cmocka, GoogleTest
  /^\[=+\] \d+ tests? /,
  /Run Summary:/, // CUnit
  /^\d+%: Checks: \d+, Failures: \d+/, // Check
  /Executed \d+ tests?, with \d+ failures?/, // XCTest
  /Test run with \d+ tests?/, // Swift Testing
  /^\s*(Test Files|Test Suites|Tests)[: ]\s+\d+/, // vitest, jest
];

/** The closing lines a part of the log may keep: its own runner's. */
export const ALLOWED = {
  pytest: [/^\s*(\d+ (passed|failed|errors?|skipped|warnings?|deselected|xfailed|xpassed),? ?)+ in [\d.]+s/i],
  vitest: [/^\s*(Test Files|Tests)\s+\d+ (passed|failed|skipped)/],
};

/** Whether a line is a runner summary that `allow` (a key of ALLOWED, or none) does not admit. */
export function withheld(line, allow) {
  // eslint-disable-next-line no-control-regex
  const plain = line.replace(/\x1b\[[0-9;]*m/g, '');
  if (!SUMMARY_PATTERNS.some((p) => p.test(plain))) return false;
  return !(allow && ALLOWED[allow]?.some((p) => p.test(plain)));
}

async function main() {
  const i = process.argv.indexOf('--allow');
  const allow = i > 0 ? process.argv[i + 1] : undefined;
  let count = 0;
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    if (withheld(line, allow)) count++;
    else process.stdout.write(line + '\n');
  }
  if (count)
    process.stdout.write(
      `log-guard: withheld ${count} line(s) shaped like another test runner's closing line (run the part alone to see them)\n`,
    );
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
