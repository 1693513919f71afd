// The drivers of SCALA groups get Ilum's job interface and the runner's jar ahead of the group's jars,
// on both adapters; PYTHON groups' drivers do not.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDriverManifests } from '../../activities/adapters/k8s/manifests';
import { sparkSubmitArgs } from '../../activities/adapters/local/submit-args';
import { IMAGE_JVM_DIR, RUNNER_JVM_JARS } from '../../activities/adapters/runner-jvm';
import { InvalidSpecError, type DriverSpec } from '../../domain/driver';
import { sparkSpec } from '../../testkit/spark-spec';

let dir: string;
let stackDir: string;
let groupJar: string;
let runner: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'scala-runner-args-'));
  stackDir = path.join(dir, 'stack');
  mkdirSync(path.join(stackDir, 'jvm'), { recursive: true });
  for (const jar of RUNNER_JVM_JARS) writeFileSync(path.join(stackDir, 'jvm', jar), 'jar');
  groupJar = path.join(dir, 'jobs.jar');
  writeFileSync(groupJar, 'jar');
  runner = path.join(dir, 'runner.py');
  writeFileSync(runner, '');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const spec = (language: 'SCALA' | 'PYTHON', jars: string[]): DriverSpec => ({
  driverId: 'inst-g1-0',
  role: 'runner',
  env: { RUNNER_LANGUAGE: language },
  labels: { groupId: 'g1' },
  spark: sparkSpec({
    name: 'g-0',
    language,
    clusterName: 'default',
    packages: ['org.apache.commons:commons-csv:1.10.0'],
    artifacts: { jars, files: [], pyFiles: [] },
  }),
});

const optOf = (args: string[], flag: string) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
const local = (s: DriverSpec, stack = stackDir) =>
  sparkSubmitArgs(s, { SPARK_HOME: '/spark', DRIVER_DIR: dir, LOCAL_SPARK_THREADS: 2, STACK_DIR: stack }, runner);

describe('the driver of a SCALA group', () => {
  it('local: has the job interface and the runner jar before the group jars, and the packages', () => {
    const args = local(spec('SCALA', [groupJar]));
    expect(optOf(args, '--jars')).toBe(
      [...RUNNER_JVM_JARS.map((j) => path.join(stackDir, 'jvm', j)), groupJar].join(','),
    );
    expect(optOf(args, '--packages')).toBe('org.apache.commons:commons-csv:1.10.0');
    expect(args.at(-1)).toBe(runner);
    expect(args).not.toContain('--class');
  });

  it('local: names the missing jars and scripts/setup.sh when setup has not made them', () => {
    expect(() => local(spec('SCALA', []), path.join(dir, 'no-stack'))).toThrow(InvalidSpecError);
    expect(() => local(spec('SCALA', []), path.join(dir, 'no-stack'))).toThrow(
      /ilum-job-api-6\.0\.0\.jar.*run scripts\/setup\.sh/,
    );
  });

  it('local: a PYTHON group gets only its own jars', () => {
    expect(optOf(local(spec('PYTHON', [groupJar])), '--jars')).toBe(groupJar);
    expect(optOf(local(spec('PYTHON', [])), '--jars')).toBeUndefined();
  });

  it('k8s: takes the jars from the image, beside runner.py', () => {
    const cluster = { name: 'k8s', url: 'https://k8s.example:6443', storages: { s3: { sparkBucket: 'bucket' } } };
    const config = { K8S_SPARK_IMAGE: 'spark:3.5.7', K8S_NAMESPACE: 'ns', ARTIFACT_DIR: dir };
    const args = buildDriverManifests(spec('SCALA', [groupJar]), { cluster, config }).pod.spec!.containers[0].args!;
    expect(optOf(args, '--jars')).toBe(
      [...RUNNER_JVM_JARS.map((j) => `local://${IMAGE_JVM_DIR}/${j}`), 's3a://bucket/artifacts/jobs.jar'].join(','),
    );
    const python = buildDriverManifests(spec('PYTHON', []), { cluster, config }).pod.spec!.containers[0].args!;
    expect(optOf(python, '--jars')).toBeUndefined();
  });
});
