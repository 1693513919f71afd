// The Spark settings shared by the forms of single jobs (4.19), groups (4.2) and schedules (4.12):
// every field a string, delimited strings parsed by domain/delimited.ts (409 naming the field).
import { z } from 'zod';
import {
  parseArgs,
  parseIntField,
  parseJobConfig,
  parsePackages,
  parsePyRequirements,
  parseTags,
} from '../domain/delimited';
import { parseMemorySettings, type MemoryForm } from '../domain/memory';
import { Language, LANGUAGES } from '../domain/states';
import type { Artifacts, SparkSpec } from '../domain/types';
import { conflict } from './errors';
import { MemorySettingsCreation } from './schemas';

const str = (max: number, what = 'characters') => z.string().max(max, `must be at most ${max} ${what}`);

/** Memory fields as separate form fields (docs/api.md: Memory settings). */
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
    if (!spec.jobClass)
      throw conflict('jobClass: a PYTHON job needs the module among its pyFiles that is the main program');
    const names = uploads.pyFiles.map((p) => p.split('/').pop()!.replace(/\.py$/, ''));
    if (!names.includes(spec.jobClass.replace(/\.py$/, ''))) {
      throw conflict(
        `jobClass: '${spec.jobClass}' is not one of the uploaded pyFiles (${names.join(', ') || 'none uploaded'})`,
      );
    }
  }
}
