// Scenarios of the console's jobs pages (placeholder: the pages are being written).
import type { ConsoleContext } from './context';

export function jobsScenarios(_c: ConsoleContext): void {}
