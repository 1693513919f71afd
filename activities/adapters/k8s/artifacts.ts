// Where a driver pod finds its artifacts, and which one spark-submit runs. The artifact store is the
// worker's folder; launch uploads its files to the cluster's storage bucket (artifact-store.ts) under
// artifacts/<path in the store>, and the pod reads them from there over s3a.
import { imageRunnerJars } from '../runner-jvm';
import path from 'node:path';
import type { DriverSpec } from '../../../domain/driver';
import { THRIFT_SERVER_CLASS } from '../sql-engine-config';
import { CONNECT_SERVER_CLASS, imageConnectJars } from './connect-image';
import { invalidSpec } from './errors';
import { DEFAULT_RUNNER_PATH, type K8sCluster } from './options';

const URI = /^[a-z][a-z0-9+.-]*:\/\//i;

/** A file of the artifact store and where it goes in the bucket. */
export interface ArtifactUpload {
  file: string;
  key: string;
}

export interface ArtifactUris {
  jars: string[];
  pyFiles: string[];
  files: string[];
  /** Some artifact is read over s3a (so the driver needs hadoop-aws). */
  usesS3a: boolean;
  /** The spark bucket the uploads go to (set when there are uploads). */
  bucket?: string;
  /** What launch uploads before the pod starts: every artifact that is a path in the store. */
  uploads: ArtifactUpload[];
}

/** The key prefix of an owner's (job, group, schedule) artifacts in the spark bucket. */
export const ARTIFACT_PREFIX = 'artifacts/';

/**
 * The URIs of a spec's artifacts as the pod sees them: URIs stay, paths inside the artifact store
 * become s3a URIs in the cluster's spark bucket, anything else is refused.
 */
export function artifactUris(spec: DriverSpec, cluster: K8sCluster, artifactDir: string): ArtifactUris {
  const storageKey = cluster.sparkStorage ?? 's3';
  const storage = cluster.storages?.[storageKey];
  const artifactRoot = path.resolve(artifactDir);
  let usesS3a = false;
  const uploads: ArtifactUpload[] = [];
  const uri = (p: string): string => {
    if (URI.test(p)) {
      if (/^s3a:/i.test(p)) usesS3a = true;
      return p;
    }
    const rel = path.relative(artifactRoot, path.resolve(artifactRoot, p));
    if (!rel || rel.startsWith('..') || path.isAbsolute(rel))
      throw invalidSpec(`artifact '${p}' is not inside the artifact store ${artifactRoot}`);
    if (!storage?.sparkBucket) {
      throw invalidSpec(
        `cluster '${cluster.name}' has no storage '${storageKey}' with a sparkBucket: k8s drivers read artifacts such as '${path.basename(p)}' from it`,
      );
    }
    usesS3a = true;
    const key = `${ARTIFACT_PREFIX}${rel.split(path.sep).join('/')}`;
    uploads.push({ file: path.resolve(artifactRoot, p), key });
    return `s3a://${storage.sparkBucket}/${key}`;
  };
  const { jars, pyFiles, files } = spec.spark.artifacts;
  return {
    jars: jars.map(uri),
    pyFiles: pyFiles.map(uri),
    files: files.map(uri),
    usesS3a,
    ...(uploads.length ? { bucket: storage!.sparkBucket } : {}),
    uploads,
  };
}

export interface MainResource {
  /** What spark-submit runs: the main jar, the main python file or the runner. */
  primary: string;
  mainClass?: string;
  /** The other jars and python files (--jars, --py-files). */
  extraJars: string[];
  extraPyFiles: string[];
}

/**
 * The primary resource of a driver: the runner for a runner, the first jar of a SCALA application,
 * the pyFile named by jobClass (or the only one) of a PYTHON application, the Thrift Server's class
 * for an SQL engine.
 */
export function mainResource(spec: DriverSpec, uris: ArtifactUris, runnerPath = DEFAULT_RUNNER_PATH): MainResource {
  const s = spec.spark;
  const { jars, pyFiles } = uris;
  if (spec.role === 'sql-engine') {
    // Spark's Thrift Server is run by class alone; `spark-internal` is Spark's own word for no resource.
    return { primary: 'spark-internal', mainClass: THRIFT_SERVER_CLASS, extraJars: jars, extraPyFiles: [] };
  }
  if (spec.role === 'connect-server') {
    // Its jars are in the driver image (connect-server.ts); CONNECT_ARG_PARTS ends with `spark-internal`.
    const extraJars = [...imageConnectJars(), ...jars];
    return { primary: 'spark-internal', mainClass: CONNECT_SERVER_CLASS, extraJars, extraPyFiles: [] };
  }
  if (spec.role === 'runner') {
    // SCALA groups: the job interface and the runner's JVM classes, which the image holds beside runner.py.
    const extraJars = s.language === 'SCALA' ? [...imageRunnerJars(), ...jars] : jars;
    return { primary: runnerPath, extraJars, extraPyFiles: pyFiles };
  }
  if (s.language === 'SCALA') {
    if (jars.length === 0)
      throw invalidSpec(`job '${s.name}' has no main jar: a SCALA application needs at least one jar`);
    return { primary: jars[0], mainClass: s.jobClass || undefined, extraJars: jars.slice(1), extraPyFiles: pyFiles };
  }
  const names = s.artifacts.pyFiles.map((p) => path.basename(p));
  let i = s.jobClass ? names.findIndex((b) => b === s.jobClass || b.replace(/\.py$/, '') === s.jobClass) : -1;
  if (i < 0 && !s.jobClass && pyFiles.length === 1) i = 0;
  if (i < 0) {
    throw invalidSpec(
      `job '${s.name}' has no main python file: no pyFile is named '${s.jobClass ?? ''}' or '${s.jobClass ?? ''}.py' (pyFiles: ${names.join(', ') || 'none'})`,
    );
  }
  return { primary: pyFiles[i], extraJars: jars, extraPyFiles: pyFiles.filter((_, j) => j !== i) };
}
