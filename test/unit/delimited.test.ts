import { describe, expect, it } from 'vitest';
import {
  checkJvmMemory,
  checkQuantity,
  FieldError,
  formatTags,
  jvmMemoryBytes,
  parseArgs,
  parseJobConfig,
  parsePackages,
  parsePyRequirements,
  parseTags,
} from '../../domain/delimited';
import { memorySparkConf, parseMemorySettings } from '../../domain/memory';

describe('delimited strings (docs/api.md: Delimited strings)', () => {
  it('parses tags and formats them back', () => {
    expect(parseTags('tags', 'team=data; env = prod;;url=a=b')).toEqual({ team: 'data', env: 'prod', url: 'a=b' });
    expect(formatTags({ a: '1', b: '2' })).toBe('a=1;b=2');
    expect(parseTags('tags', '')).toEqual({});
    expect(() => parseTags('tags', 'novalue')).toThrow(FieldError);
    expect(() => parseTags('tags', '=x')).toThrow(/tags: entry '=x'/);
    expect(() => parseTags('tags', 'a=1;a=2')).toThrow(/appears twice/);
  });
  it('parses jobConfig and requires spark. keys', () => {
    expect(parseJobConfig('jobConfig', 'spark.executor.memory=2g;spark.sql.shuffle.partitions=4')).toEqual({
      'spark.executor.memory': '2g',
      'spark.sql.shuffle.partitions': '4',
    });
    expect(() => parseJobConfig('jobConfig', 'executor.memory=2g')).toThrow(/jobConfig: key 'executor.memory'/);
  });
  it('parses pyRequirements', () => {
    expect(parsePyRequirements('pyRequirements', 'numpy==1.26.4;requests; pandas[excel]==2.0')).toEqual([
      'numpy==1.26.4',
      'requests',
      'pandas[excel]==2.0',
    ]);
    expect(() => parsePyRequirements('pyRequirements', 'numpy>=1')).toThrow(/pyRequirements/);
    expect(() => parsePyRequirements('pyRequirements', 'a==1==2')).toThrow(FieldError);
    expect(() => parsePyRequirements('pyRequirements', 'rm -rf /')).toThrow(FieldError);
  });
  it('parses packages', () => {
    expect(parsePackages('packages', 'org.apache.hadoop:hadoop-aws:3.3.4, io.delta:delta-spark_2.12:3.1.0')).toEqual([
      'org.apache.hadoop:hadoop-aws:3.3.4',
      'io.delta:delta-spark_2.12:3.1.0',
    ]);
    expect(() => parsePackages('packages', 'org.apache:hadoop')).toThrow(/Maven coordinate/);
  });
  it('parses args', () => {
    expect(parseArgs('args', 'a;b c;;d')).toEqual(['a', 'b c', 'd']);
    expect(parseArgs('args', undefined)).toEqual([]);
  });
  it('checks JVM memory strings and Kubernetes quantities', () => {
    expect(checkJvmMemory('m', '512m')).toBe('512m');
    expect(jvmMemoryBytes('2g')).toBe(2 * 1024 ** 3);
    for (const bad of ['512', '1.5g', '1gb', 'g', '0m', '-1g'])
      expect(() => checkJvmMemory('m', bad)).toThrow(FieldError);
    for (const ok of ['500m', '2', '1.5', '4Gi', '100M', '1e3', '0.5']) expect(checkQuantity('q', ok)).toBe(ok);
    for (const bad of ['1 GB', 'lots', '4gi', '', '1..2']) expect(() => checkQuantity('q', bad)).toThrow(FieldError);
  });
});

describe('memory settings (docs/api.md: Memory settings)', () => {
  it('parses form strings into typed settings and Spark properties', () => {
    const m = parseMemorySettings({
      executors: '2',
      driverMemory: '1g',
      dynamicAllocation: 'true',
      minExecutors: '1',
      maxExecutors: '3',
    });
    expect(m).toEqual({ executors: 2, driverMemory: '1g', dynamicAllocation: true, minExecutors: 1, maxExecutors: 3 });
    expect(memorySparkConf(m)).toMatchObject({
      'spark.executor.instances': '2',
      'spark.driver.memory': '1g',
      'spark.dynamicAllocation.enabled': 'true',
      'spark.dynamicAllocation.minExecutors': '1',
      'spark.dynamicAllocation.maxExecutors': '3',
    });
    expect(parseMemorySettings({})).toEqual({ dynamicAllocation: false });
  });
  it('rejects bad values naming the field', () => {
    expect(() => parseMemorySettings({ minExecutors: '5', maxExecutors: '2' })).toThrow(/minExecutors/);
    expect(() => parseMemorySettings({ driverCores: '0' })).toThrow(/driverCores/);
    expect(() => parseMemorySettings({ executorMemory: '2 g' })).toThrow(/executorMemory/);
    expect(() => parseMemorySettings({ dynamicAllocation: 'maybe' })).toThrow(/dynamicAllocation/);
  });
  it('keeps base values for fields an update leaves out', () => {
    const base = parseMemorySettings({ executors: '2', driverMemory: '1g' });
    expect(parseMemorySettings({ executorMemory: '3g' }, base)).toEqual({
      executors: 2,
      driverMemory: '1g',
      executorMemory: '3g',
      dynamicAllocation: false,
    });
  });
});
