// The console's submit-form checks (console/src/pages/jobs-validate.ts) against the API's own (the form schema,
// the Spark spec parsers and the main-resource rule of api/jobs and api/spark-form.ts): for each one-fault
// form, both refuse it naming the same field with the same words, and both accept a good form.
import { describe, expect, it } from 'vitest';
import { toHttp } from '../../api/errors';
import { JobSubmitForm } from '../../api/jobs/schemas';
import { checkMainResource, parseMaxRetries, sparkSpecOf } from '../../api/spark-form';
import {
  fieldOfMessage,
  submitBody,
  validateSubmit,
  type SubmitFiles,
  type SubmitValues,
} from '../../console/src/pages/jobs-validate';

const GOOD: SubmitValues = {
  name: 'count',
  clusterName: 'default',
  language: 'PYTHON',
  jobClass: 'count',
  args: '',
  jobConfig: '',
  tags: '',
  pyRequirements: '',
  packages: '',
  maxRetries: '',
};
const py = (name: string) => new File(['print(1)'], name);
const FILES: SubmitFiles = { jars: [], pyFiles: [py('count.py')], files: [] };

/** What the API answers for the form (its multipart fields as strings, files by name), or undefined. */
function apiRefusal(v: SubmitValues, files: SubmitFiles): string | undefined {
  const form: Record<string, string> = {};
  for (const [k, value] of submitBody(v, files).entries()) if (typeof value === 'string') form[k] = value;
  try {
    const body = JobSubmitForm.parse(form);
    const spec = sparkSpecOf(body.name, body, { jars: [], files: [], pyFiles: [] });
    checkMainResource(spec, { jars: files.jars.map((f) => f.name), pyFiles: files.pyFiles.map((f) => f.name) });
    parseMaxRetries(body.maxRetries);
    return undefined;
  } catch (err) {
    return toHttp(err).message;
  }
}

/** The browser's first complaint, written as the API writes it: `field: message`. */
function browserRefusal(v: SubmitValues, files: SubmitFiles): string | undefined {
  const errors = Object.entries(validateSubmit(v, files)).filter(([, m]) => m);
  return errors.length ? `${errors[0][0]}: ${errors[0][1]}` : undefined;
}

const CASES: [what: string, change: Partial<SubmitValues>, files?: Partial<SubmitFiles>][] = [
  ['an empty name', { name: '  ' }],
  ['a name with a slash', { name: 'a/b' }],
  ['a tag without a value', { tags: 'team' }],
  ['a twice-given tag', { tags: 'a=1;a=2' }],
  ['a config entry without =', { jobConfig: 'spark.x' }],
  ['retries out of range', { maxRetries: '101' }],
  ['retries not a number', { maxRetries: 'two' }],
  ['driver memory without unit', { driverMemory: '512' }],
  ['executors not a number', { executors: 'x' }],
  ['driver cores of zero', { driverCores: '0' }],
  ['min above max executors', { minExecutors: '4', maxExecutors: '2' }],
  ['initial below min executors', { minExecutors: '2', initialExecutors: '1', maxExecutors: '4' }],
  ['a PYTHON job without a module', { jobClass: '' }],
  ['a module that was not uploaded', { jobClass: 'other' }],
  ['a SCALA job without a jar', { language: 'SCALA', jobClass: 'com.example.Main' }],
  ['a SCALA job without a class', { language: 'SCALA', jobClass: '' }, { jars: [py('app.jar')] }],
];

describe('console submit form checks', () => {
  it('accepts the form the API accepts', () => {
    expect(apiRefusal(GOOD, FILES)).toBeUndefined();
    expect(browserRefusal(GOOD, FILES)).toBeUndefined();
    const full = { ...GOOD, tags: 'a=1;b=2', jobConfig: 'spark.x=1', maxRetries: '3', driverMemory: '1g' };
    expect(apiRefusal(full, FILES)).toBeUndefined();
    expect(browserRefusal(full, FILES)).toBeUndefined();
  });

  it.each(CASES)('refuses %s with the API’s words', (_what, change, files) => {
    const v = { ...GOOD, ...change };
    const f = { ...FILES, ...files };
    const api = apiRefusal(v, f);
    const browser = browserRefusal(v, f);
    expect(api).toBeTruthy();
    expect(browser).toBeTruthy();
    // The API may add further complaints about the same field after a `;`; the first is the same.
    expect(api!.startsWith(browser!)).toBe(true);
  });

  it('refuses uploads the API refuses, before sending them', () => {
    const errors = validateSubmit(GOOD, { ...FILES, pyFiles: [py('count.py'), py('notes.txt')] });
    expect(errors.pyFiles).toBe("'notes.txt' is not a .py, .zip or .egg file");
    expect(validateSubmit(GOOD, { ...FILES, jars: [py('lib.zip')] }).jars).toBe("'lib.zip' is not a .jar file");
  });

  it('finds the field a service message names', () => {
    expect(fieldOfMessage("clusterName: cluster 'x' does not exist")).toBe('clusterName');
    expect(fieldOfMessage('the request needs 1024Mi of memory')).toBeUndefined();
    expect(fieldOfMessage('body: unknown key')).toBeUndefined();
  });
});
