// The one builder of SparkSpec and DriverSpec for tests and benchmarks: a PYTHON job on the local cluster with
// nothing uploaded, no settings and dynamic allocation off; a test names only the fields it is about.
import type { DriverSpec } from '../domain/driver';
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

/** A DriverSpec of a single job's driver with `over` on top, its `spark` built by sparkSpec from `spark`. */
export const driverSpec = (
  over: Partial<Omit<DriverSpec, 'spark'>> = {},
  spark: Partial<SparkSpec> = {},
): DriverSpec => ({
  driverId: 'job-test-1',
  role: 'application',
  env: {},
  labels: {},
  ...over,
  spark: sparkSpec(spark),
});
