// Scenarios of the console's clusters pages (placeholder: the pages are being written).
import type { ConsoleContext } from './context';

export function clustersScenarios(_c: ConsoleContext): void {}
