// The one builder of SparkSpec for tests and benchmarks: a PYTHON job on the local cluster with
// nothing uploaded, no settings and dynamic allocation off; a test names only the fields it is about.
import type { SparkSpec } from '../domain/types';

/** A SparkSpec with `over` on top of the defaults (`artifacts` and `memorySettings` are replaced whole). */
export const sparkSpec = (over: Partial<SparkSpec> = {}): SparkSpec => ({
  name: 'job',
  language: 'PYTHON',
  clusterName: 'local',
  args: [],
  jobConfig: {},
  pyRequirements: [],
  packages: [],
  memorySettings: { dynamicAllocation: false },
  artifacts: { jars: [], files: [], pyFiles: [] },
  tags: {},
  ...over,
});
