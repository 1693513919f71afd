// Scenarios of the console's sql pages (placeholder: the pages are being written).
import type { ConsoleContext } from './context';

export function sqlScenarios(_c: ConsoleContext): void {}
