// scripts/log-guard.mjs: what keeps a CI log's verdict lines to the runners that really ran.
import { describe, expect, it } from 'vitest';
// @ts-expect-error a plain ES module of the scripts folder, without types
import { withheld } from '../../scripts/log-guard.mjs';

describe('log guard', () => {
  it("withholds nested tools' closing lines: schemathesis's pytest-style banner among them", () => {
    for (const line of [
      '============================= 2 warnings in 66.84s =============================',
      '=================== 1 failed, 3 passed in 2.10s ===================',
      '12 passed in 0.52s',
      'no tests ran in 0.01s',
      'ok  \tgithub.com/x/y\t0.012s',
      'test result: ok. 3 passed; 0 failed; 0 ignored',
      'Tests run: 4, Failures: 0, Errors: 0, Skipped: 0',
      '100% tests passed, 0 tests failed out of 12',
      '3 examples, 0 failures',
      'tests: 3 passed, 0 failed',
      '      Tests  615 passed (615)',
      '# pass 12',
      '[  PASSED  ] 5 tests.',
    ])
      expect(withheld(line), line).toBe(true);
  });

  it("keeps each part's own runner's closing line, and every ordinary line", () => {
    expect(withheld('73 passed, 2 warnings in 3.21s', 'pytest')).toBe(false);
    expect(withheld(' Test Files  72 passed (72)', 'vitest')).toBe(false);
    expect(withheld('      Tests  615 passed (615)', 'vitest')).toBe(false);
    expect(withheld('      Tests  2 failed | 613 passed (615)', 'vitest')).toBe(false);
    // vitest may not keep a pytest-style line, nor pytest a vitest one.
    expect(withheld('============ 2 warnings in 66.84s ============', 'vitest')).toBe(true);
    expect(withheld('      Tests  615 passed (615)', 'pytest')).toBe(true);
    for (const line of [
      ' ✓ |e2e| test/e2e/jobs.test.ts (9 tests) 153000ms',
      '     ✓ retries a failing application: FAILED after attempt 3 with maxRetries 2  31000ms',
      'group executions: 45 submitted, 45 ok, 0 failed with a message, 0 lost, 0 run twice',
      '2026-11-25T10:10:02.086Z INFO  [auth] bootstrap admin key stored (hashed) keyId=bootstrap',
      'setup: ready (/work/main/.stack)',
    ])
      expect(withheld(line, 'vitest'), line).toBe(false);
  });
});
