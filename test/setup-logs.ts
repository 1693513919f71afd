// Every test file's first module: the service's log lines (lib/log) and the Temporal SDK's go through the
// console, so vitest shows them with the test that wrote them, and only when that test fails
// (`silent: 'passed-only'` in vitest.config.ts). Written to stdout directly, they filled the CI log of
// every passing run.
import { setLogSink } from '../lib/log';

import type { LogSink } from '../lib/log';

export const consoleSink: LogSink = (level, line) =>
  level === 'error' || level === 'warn' ? console.error(line) : console.log(line);
setLogSink(consoleSink);
