// The single-job submit form's checks in the browser, the same the API makes (api/jobs/schemas.ts,
// api/spark-form.ts, api/artifacts.ts): the delimited strings and memory settings go through the very parsers
// the API uses (domain/delimited.ts, domain/memory.ts), so the messages match. What only the service can know
// (does the cluster exist, does the request fit its quota) is left to it; its answer is shown as it is.
import {
  FieldError,
  parseIntField,
  parseJobConfig,
  parsePackages,
  parsePyRequirements,
  parseTags,
} from '../../../domain/delimited';
import { MEMORY_FIELDS, parseMemorySettings, type MemoryForm } from '../../../domain/memory';

type MemoryField = (typeof MEMORY_FIELDS)[number];

/** The text fields of the form, as the API's multipart fields are named. */
export interface SubmitValues extends MemoryForm {
  name: string;
  clusterName: string;
  language: 'SCALA' | 'PYTHON';
  jobClass: string;
  args: string;
  jobConfig: string;
  tags: string;
  pyRequirements: string;
  packages: string;
  maxRetries: string;
}

export interface SubmitFiles {
  jars: File[];
  pyFiles: File[];
  files: File[];
}

export type FormErrors = Partial<Record<keyof SubmitValues | keyof SubmitFiles, string>>;

/** Longest value of each text field (api/spark-form.ts). */
const MAX_LENGTH: Partial<Record<keyof SubmitValues, number>> = {
  tags: 4096,
  clusterName: 128,
  jobClass: 512,
  jobConfig: 16384,
  pyRequirements: 4096,
  packages: 4096,
  args: 16384,
};

const NAME_RULE = /^[A-Za-z0-9][A-Za-z0-9 ._-]*$/;

function checkName(s: string): string | undefined {
  const v = s.trim();
  if (!v) return 'must not be empty';
  if (v.length > 128) return 'must be at most 128 characters';
  if (!NAME_RULE.test(v)) return 'must start with a letter or digit and contain only letters, digits, space, . _ -';
  return undefined;
}

/** Runs `fn`; a FieldError becomes the message for its field (without the `field: ` prefix). */
function catchField(errors: FormErrors, fn: () => unknown): void {
  try {
    fn();
  } catch (e) {
    if (!(e instanceof FieldError)) throw e;
    const field = e.field as keyof FormErrors;
    errors[field] ??= e.message.replace(`${e.field}: `, '');
  }
}

/** Whole numbers as the API's memory schema checks them before parsing (api/schemas.ts). */
const INT_MIN: Partial<Record<MemoryField, number>> = {
  executors: 0,
  driverCores: 1,
  executorCores: 1,
  initialExecutors: 0,
  minExecutors: 0,
  maxExecutors: 0,
};

function checkMemory(v: SubmitValues, errors: FormErrors): void {
  for (const [f, min] of Object.entries(INT_MIN) as [MemoryField, number][]) {
    const s = v[f]?.trim();
    if (!s) continue;
    if (!/^[0-9]+$/.test(s)) errors[f] = 'must be a whole number';
    else if (Number(s) < min) errors[f] = `must be at least ${min}`;
  }
  if (MEMORY_FIELDS.some((f) => errors[f])) return;
  const form: MemoryForm = {};
  for (const f of MEMORY_FIELDS) if (v[f]?.trim()) form[f] = v[f]!.trim();
  catchField(errors, () => parseMemorySettings(form));
}

const baseName = (f: File) => f.name.split(/[\\/]/).pop() ?? f.name;

function checkFiles(files: SubmitFiles, errors: FormErrors): void {
  for (const kind of ['jars', 'pyFiles', 'files'] as const) {
    const seen = new Set<string>();
    for (const f of files[kind]) {
      const n = baseName(f);
      if (seen.has(n)) errors[kind] ??= `two files are named '${n}'`;
      seen.add(n);
      if (kind === 'jars' && !n.endsWith('.jar')) errors[kind] ??= `'${n}' is not a .jar file`;
      if (kind === 'pyFiles' && !/\.(py|zip|egg)$/.test(n)) errors[kind] ??= `'${n}' is not a .py, .zip or .egg file`;
    }
  }
}

/** The main resource a job needs (api/spark-form.ts: checkMainResource). */
function checkMainResource(v: SubmitValues, files: SubmitFiles, errors: FormErrors): void {
  const jobClass = v.jobClass.trim();
  if (v.language === 'SCALA') {
    if (!jobClass) errors.jobClass ??= 'a SCALA job needs the main class to run';
    if (files.jars.length === 0) errors.jars ??= 'a SCALA job needs at least one jar holding its main class';
    return;
  }
  if (!jobClass) {
    errors.jobClass ??= 'a PYTHON job needs the module among its pyFiles that is the main program';
    return;
  }
  const names = files.pyFiles.map((f) => baseName(f).replace(/\.py$/, ''));
  if (!names.includes(jobClass.replace(/\.py$/, '')))
    errors.jobClass ??= `'${jobClass}' is not one of the uploaded pyFiles (${names.join(', ') || 'none uploaded'})`;
}

/** Every problem of the form, by field; empty when the API would accept it (cluster and quota aside). */
export function validateSubmit(v: SubmitValues, files: SubmitFiles): FormErrors {
  const errors: FormErrors = {};
  const nameError = checkName(v.name);
  if (nameError) errors.name = nameError;
  for (const [f, max] of Object.entries(MAX_LENGTH) as [keyof SubmitValues, number][]) {
    if ((v[f] ?? '').length > max) errors[f] = `must be at most ${max} characters`;
  }
  catchField(errors, () => parseTags('tags', v.tags));
  catchField(errors, () => parseJobConfig('jobConfig', v.jobConfig));
  catchField(errors, () => parsePyRequirements('pyRequirements', v.pyRequirements));
  catchField(errors, () => parsePackages('packages', v.packages));
  catchField(errors, () => parseIntField('maxRetries', v.maxRetries.trim() || undefined, 0, 100));
  checkMemory(v, errors);
  checkFiles(files, errors);
  checkMainResource(v, files, errors);
  return errors;
}

/** The multipart body of POST /job/submit: empty optional fields are left out, so the API's defaults apply. */
export function submitBody(v: SubmitValues, files: SubmitFiles): FormData {
  const body = new FormData();
  for (const [k, value] of Object.entries(v) as [string, string | undefined][]) {
    const s = k === 'args' ? value : value?.trim();
    // The name always goes, so an empty one gets the API's own "must not be empty".
    if (s || k === 'name') body.append(k, s ?? '');
  }
  for (const kind of ['jars', 'pyFiles', 'files'] as const) for (const f of files[kind]) body.append(kind, f, f.name);
  return body;
}

/** `field: message` from the service → the field it names, when it is one of the form's. */
export function fieldOfMessage(message: string): keyof FormErrors | undefined {
  const m = /^([A-Za-z]+):/.exec(message);
  const known = new Set<string>([
    'name',
    'clusterName',
    'language',
    'jobClass',
    'args',
    'jobConfig',
    'tags',
    'pyRequirements',
    'packages',
    'maxRetries',
    'jars',
    'pyFiles',
    'files',
    ...MEMORY_FIELDS,
  ]);
  return m && known.has(m[1]) ? (m[1] as keyof FormErrors) : undefined;
}
