// The jars a SCALA group's runner needs on its driver's classpath besides the group's own: Ilum's job
// interface (cloud.ilum.job.Job) and the runner's helper classes (runner/jvm), both made by
// scripts/setup.sh under STACK_DIR/jvm. The runner calls them through py4j (runner/spark_runner/jvm.py).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { InvalidSpecError } from '../../domain/driver';

export const RUNNER_JVM_JARS = ['ilum-job-api-6.0.0.jar', 'spark-runner.jar'] as const;

/** Where a Spark image for k8s clusters must hold them, beside runner.py. */
export const IMAGE_JVM_DIR = '/opt/spark-orchestrator/jvm';

/** Absolute paths of the jars on this host; an InvalidSpecError when setup has not made them. */
export function localRunnerJars(stackDir: string): string[] {
  const jars = RUNNER_JVM_JARS.map((name) => path.resolve(stackDir, 'jvm', name));
  const missing = jars.filter((jar) => !existsSync(jar));
  if (missing.length)
    throw new InvalidSpecError(`a SCALA group's driver needs ${missing.join(', ')}: run scripts/setup.sh`);
  return jars;
}

/** The jars inside the Spark image of a k8s cluster (local:// — on every node's image, not uploaded). */
export const imageRunnerJars = (): string[] => RUNNER_JVM_JARS.map((name) => `local://${IMAGE_JVM_DIR}/${name}`);
