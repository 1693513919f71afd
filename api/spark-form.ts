// The Spark settings shared by the forms of single jobs (4.19), groups (4.2) and schedules (4.12):
// every field a string, delimited strings parsed by domain/delimited.ts (409 naming the field).
import { z } from 'zod';
import { parseArgs, parseIntField, parseJobConfig, parsePackages, parsePyRequirements, parseTags, jvmMemoryBytes } from '../domain/delimited';
import { parseMemorySettings, type MemoryForm } from '../domain/memory';
import { ClusterType, Language, LANGUAGES } from '../domain/states';
import type { Artifacts, MemorySettings, SparkSpec } from '../domain/types';
import { Collections, type Store } from '../lib/mongo';
import { conflict, notFound, overLimit } from './errors';
import { MemorySettingsCreation } from './schemas';

const str = (max: number, what = 'characters') => z.string().max(max, `must be at most ${max} ${what}`);

/** Memory fields as separate form fields (spec §2.7). */
export const memoryFormFields = MemorySettingsCreation.shape;

export const sparkFormFields = {
  tags: str(4096).optional(),
  language: z.enum(LANGUAGES).optional(),
  clusterName: str(128).optional(),
  jobClass: str(512).optional(),
  jobConfig: str(16384).optional(),
  pyRequirements: str(4096).optional(),
  packages: str(4096).optional(),
  args: str(16384).optional(),
  ...memoryFormFields,
};

export type SparkForm = { [K in keyof typeof sparkFormFields]?: string };

export const MEMORY_KEYS = Object.keys(memoryFormFields) as (keyof MemoryForm)[];

export function memoryFormOf(form: Record<string, unknown>): MemoryForm {
  return Object.fromEntries(MEMORY_KEYS.filter((k) => form[k] !== undefined).map((k) => [k, form[k]])) as MemoryForm;
}

/** Builds the Spark spec of a form; throws FieldError (409) naming the first bad field. */
export function sparkSpecOf(name: string, form: SparkForm, artifacts: Artifacts): SparkSpec {
  return {
    name,
    language: (form.language as Language | undefined) ?? Language.SCALA,
    clusterName: form.clusterName?.trim() || 'default',
    ...(form.jobClass?.trim() ? { jobClass: form.jobClass.trim() } : {}),
    args: parseArgs('args', form.args),
    jobConfig: parseJobConfig('jobConfig', form.jobConfig),
    pyRequirements: parsePyRequirements('pyRequirements', form.pyRequirements),
    packages: parsePackages('packages', form.packages),
    memorySettings: parseMemorySettings(memoryFormOf(form)),
    artifacts,
    tags: parseTags('tags', form.tags),
  };
}

export const parseMaxRetries = (s: string | undefined): number => parseIntField('maxRetries', s, 0, 100) ?? 0;

/** The main resource a single job or schedule needs, named in words when missing. */
export function checkMainResource(spec: SparkSpec, uploads: { jars: string[]; pyFiles: string[] }): void {
  if (spec.language === Language.SCALA) {
    if (!spec.jobClass) throw conflict('jobClass: a SCALA job needs the main class to run');
    if (uploads.jars.length === 0) throw conflict('jars: a SCALA job needs at least one jar holding its main class');
  } else {
    if (!spec.jobClass) throw conflict('jobClass: a PYTHON job needs the module among its pyFiles that is the main program');
    const names = uploads.pyFiles.map((p) => p.split('/').pop()!.replace(/\.py$/, ''));
    if (!names.includes(spec.jobClass.replace(/\.py$/, ''))) {
      throw conflict(`jobClass: '${spec.jobClass}' is not one of the uploaded pyFiles (${names.join(', ') || 'none uploaded'})`);
    }
  }
}

interface ClusterDoc {
  name: string;
  type: string;
  resourceQuota?: Record<string, string>;
}

/** The cluster a form names must exist (404) and the request must fit its resourceQuota (402). */
export async function checkCluster(store: Store, spec: Pick<SparkSpec, 'clusterName' | 'memorySettings'>, instances = 1): Promise<ClusterDoc> {
  const cluster = await store.col<ClusterDoc>(Collections.clusters).findOne({ name: spec.clusterName });
  if (!cluster) throw notFound(`clusterName: cluster '${spec.clusterName}' does not exist`);
  const quota = cluster.resourceQuota;
  if (quota) {
    const need = resourcesOf(spec.memorySettings, cluster.type, instances);
    const cpu = quota.limitsCpu ?? quota.requestsCpu;
    const mem = quota.limitsMemory ?? quota.requestsMemory;
    if (cpu !== undefined && need.cpu > cpuOf(cpu)) {
      throw overLimit(`the request needs ${need.cpu} CPUs, above the ${cpu} CPUs of cluster '${cluster.name}' resourceQuota`);
    }
    if (mem !== undefined && need.memory > bytesOf(mem)) {
      throw overLimit(`the request needs ${Math.ceil(need.memory / 2 ** 20)}Mi of memory, above the ${mem} of cluster '${cluster.name}' resourceQuota`);
    }
    if (quota.limitsPod !== undefined && cluster.type === ClusterType.K8S && need.pods > Number(quota.limitsPod)) {
      throw overLimit(`the request needs ${need.pods} pods, above the ${quota.limitsPod} pods of cluster '${cluster.name}' resourceQuota`);
    }
  }
  return cluster;
}

/** CPUs, bytes and pods a driver (and its executors on k8s) asks for; Spark's defaults where unset. */
export function resourcesOf(m: MemorySettings, clusterType: string, instances: number) {
  const executors = clusterType === ClusterType.K8S ? (m.dynamicAllocation ? (m.maxExecutors ?? m.initialExecutors ?? 1) : (m.executors ?? 2)) : 0;
  const driverMem = jvmMemoryBytes(m.driverMemory ?? '1g');
  const execMem = jvmMemoryBytes(m.executorMemory ?? '1g');
  return {
    cpu: instances * ((m.driverCores ?? 1) + executors * (m.executorCores ?? 1)),
    memory: instances * (driverMem + executors * execMem),
    pods: instances * (1 + executors),
  };
}

function cpuOf(q: string): number {
  return q.endsWith('m') ? Number(q.slice(0, -1)) / 1000 : Number(q);
}

function bytesOf(q: string): number {
  const m = /^([0-9.eE+-]+)([A-Za-z]*)$/.exec(q);
  if (!m) return Number.POSITIVE_INFINITY;
  const units: Record<string, number> = { '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60, m: 1e-3 };
  return Number(m[1]) * (units[m[2]] ?? 1);
}
