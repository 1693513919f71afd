// Small records for the domain unit tests.
import type { InstanceState } from '../../domain/group';
import type { Group, Job, Schedule, SparkSpec } from '../../domain/types';
import { sparkSpec } from '../../testkit/spark-spec';

export const spec = (over: Partial<SparkSpec> = {}): SparkSpec =>
  sparkSpec({
    name: 'etl',
    jobClass: 'main.py',
    args: ['--day', '1'],
    jobConfig: { 'spark.x': '1' },
    pyRequirements: ['numpy'],
    memorySettings: { dynamicAllocation: false, executors: 1 },
    artifacts: { jars: [], files: ['store/a/data.csv'], pyFiles: ['store/a/main.py'] },
    tags: { team: 'data' },
    ...over,
  });

export const job = (over: Partial<Job> = {}): Job => ({
  jobId: 'j1',
  jobName: 'etl',
  jobType: 'SINGLE',
  tags: 'team=data',
  language: 'PYTHON',
  clusterName: 'local',
  jobConfig: 'spark.x=1',
  args: [],
  pyRequirements: 'numpy',
  packages: '',
  state: 'SUBMITTED',
  submitTime: 1_000,
  maxRetries: 1,
  attempt: 1,
  memorySettings: { dynamicAllocation: false },
  ...over,
});

export const group = (over: Partial<Omit<Group, 'jobs'>> = {}): Omit<Group, 'jobs'> => ({
  id: 'g1',
  name: 'warm',
  description: '',
  kind: 'CODE',
  tags: 'team=data',
  language: 'PYTHON',
  clusterName: 'local',
  state: 'ACTIVE',
  scale: 2,
  jobConfig: { 'spark.x': '1' },
  pyRequirements: 'numpy',
  packages: '',
  createdTime: 1_000,
  memorySettings: { dynamicAllocation: false, executors: 1 },
  autoPause: false,
  ...over,
});

export const schedule = (over: Partial<Omit<Schedule, 'jobs'>> = {}): Omit<Schedule, 'jobs'> => ({
  id: 's1',
  name: 'nightly',
  description: '',
  cron: '0 2 * * *',
  tags: 'team=data',
  language: 'PYTHON',
  clusterName: 'local',
  jobConfig: {},
  pyRequirements: '',
  packages: '',
  state: 'ENABLED',
  jobClass: 'main.py',
  args: [],
  maxRetries: 0,
  createdTime: 1_000,
  memorySettings: { dynamicAllocation: false },
  ...over,
});

export const inst = (jobId: string, over: Partial<InstanceState> = {}): InstanceState => ({
  jobId,
  generation: 1,
  ready: true,
  busy: false,
  draining: false,
  ...over,
});
