// Scenarios of the console's groups pages (placeholder: the pages are being written).
import type { ConsoleContext } from './context';

export function groupsScenarios(_c: ConsoleContext): void {}
