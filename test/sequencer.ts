// The order files start in. Integration files run side by side, so the run ends when its longest file
// ends: the longest ones start first (a fresh clone has no vitest cache, and vitest then starts the
// largest files first; conformance, small and 113 s long, started last and ran alone for over a
// minute). Durations come from vitest's own cache when it has them, else from test/durations.json, which
// `npm run test:durations` writes from the last run's report (test-output/vitest.json).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Seconds per file, relative to the repository: test/durations.json. */
function recorded(root: string): Record<string, number> {
  try {
    return JSON.parse(readFileSync(path.join(root, 'test', 'durations.json'), 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

export default class DurationSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const known = recorded(root);
    const cache = this.ctx.cache;
    const seconds = (f: TestSpecification): number => {
      const rel = path.relative(root, f.moduleId);
      const cached = cache.getFileTestResults(`${f.project.name}:${rel}`);
      // A file seen in neither goes first, as vitest does with files it does not know.
      return cached ? cached.duration / 1000 : (known[rel] ?? Number.POSITIVE_INFINITY);
    };
    const group = (f: TestSpecification) => f.project.config.sequence.groupOrder;
    return [...files].sort(
      (a, b) =>
        group(a) - group(b) ||
        (a.project.name < b.project.name ? -1 : a.project.name > b.project.name ? 1 : 0) ||
        seconds(b) - seconds(a),
    );
  }
}
