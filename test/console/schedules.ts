// Scenarios of the console's schedules pages (placeholder: the pages are being written).
import type { ConsoleContext } from './context';

export function schedulesScenarios(_c: ConsoleContext): void {}
