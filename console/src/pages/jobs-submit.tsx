// The single-job submit form (`#/jobs/new`): every field of POST /job/submit, checked in the browser as the
// API checks it (jobs-validate.ts) and sent as multipart; a refusal shows the service's own message next to
// the field it names (or above the form). On success the job's page opens.
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError, get, post } from '../api';
import { href, navigate, type PageProps } from '../router';
import { useCan } from '../session';
import { Button, ErrorBox, Field, PageHeader, errorText, useAsync } from '../ui';
import {
  fieldOfMessage,
  submitBody,
  validateSubmit,
  type FormErrors,
  type SubmitFiles,
  type SubmitValues,
} from './jobs-validate';
import { MemoryFields, SparkSettingsFields, type FieldControls } from './spark-fields';
import './jobs.css';

const EMPTY: SubmitValues = {
  name: '',
  clusterName: '',
  language: 'SCALA',
  jobClass: '',
  args: '',
  jobConfig: '',
  tags: '',
  pyRequirements: '',
  packages: '',
  maxRetries: '',
};

export function SubmitJobPage(_: PageProps) {
  const canSubmit = useCan('operator');
  const clusters = useAsync((signal) => get<{ names: string[] }>('/cluster/names', undefined, signal), []);
  const [v, setV] = useState<SubmitValues>(EMPTY);
  const [files, setFiles] = useState<SubmitFiles>({ jars: [], pyFiles: [], files: [] });
  const [errors, setErrors] = useState<FormErrors>({});
  const [refusal, setRefusal] = useState<string>();
  const [busy, setBusy] = useState(false);

  const names = clusters.data?.names ?? [];
  const cluster = v.clusterName || (names.includes('default') ? 'default' : (names[0] ?? ''));

  const set =
    (k: keyof SubmitValues) => (e: JSX.TargetedEvent<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>) => {
      const value = e.currentTarget.value;
      setV((old) => ({ ...old, [k]: value }));
      if (errors[k]) setErrors((old) => ({ ...old, [k]: undefined }));
    };
  const setFileList = (k: keyof SubmitFiles) => (e: JSX.TargetedEvent<HTMLInputElement>) => {
    const list = Array.from(e.currentTarget.files ?? []);
    setFiles((old) => ({ ...old, [k]: list }));
    setErrors((old) => ({ ...old, [k]: undefined, jobClass: undefined }));
  };

  const onSubmit = async (e: Event) => {
    e.preventDefault();
    setRefusal(undefined);
    const values = { ...v, clusterName: cluster };
    const found = validateSubmit(values, files);
    setErrors(found);
    if (Object.values(found).some(Boolean)) {
      const first = Object.keys(found)[0];
      document.getElementById(`job-${first}`)?.focus();
      return;
    }
    setBusy(true);
    try {
      const { jobId } = await post<{ jobId: string }>('/job/submit', submitBody(values, files));
      navigate(`/jobs/${encodeURIComponent(jobId)}`);
    } catch (err) {
      const message = errorText(err);
      const field = err instanceof ApiError ? fieldOfMessage(message) : undefined;
      if (field) setErrors({ [field]: message.replace(/^[A-Za-z]+:\s*/, '') });
      setRefusal(err instanceof ApiError && err.status ? `${message} (${err.status})` : message);
    } finally {
      setBusy(false);
    }
  };

  const text = (k: keyof SubmitValues, label: string, hint?: string, props: JSX.IntrinsicElements['input'] = {}) => (
    <Field label={label} hint={hint} error={errors[k]}>
      <input id={`job-${k}`} value={v[k] ?? ''} onInput={set(k)} aria-invalid={!!errors[k]} {...props} />
    </Field>
  );
  const area = (k: keyof SubmitValues, label: string, hint: string) => (
    <Field label={label} hint={hint} error={errors[k]}>
      <textarea id={`job-${k}`} class="code" rows={2} value={v[k] ?? ''} onInput={set(k)} aria-invalid={!!errors[k]} />
    </Field>
  );
  const select = (k: keyof SubmitValues, label: string, options: string[], hint?: string) => (
    <Field label={label} hint={hint} error={errors[k]}>
      <select id={`job-${k}`} value={v[k] ?? ''} onChange={set(k)} aria-invalid={!!errors[k]}>
        {options.map((o) => (
          <option key={o} value={o}>
            {o || 'not set'}
          </option>
        ))}
      </select>
    </Field>
  );
  // The Spark settings' fields are named as SubmitValues' keys.
  const controls: FieldControls = {
    input: (k, label, hint) => text(k as keyof SubmitValues, label, hint),
    area: (k, label, hint) => area(k as keyof SubmitValues, label, hint ?? ''),
    select: (k, label, options, hint) => select(k as keyof SubmitValues, label, options, hint),
  };
  const upload = (k: keyof SubmitFiles, label: string, hint: string, accept?: string) => (
    <Field label={label} hint={hint} error={errors[k]}>
      <input
        id={`job-${k}`}
        type="file"
        multiple
        accept={accept}
        onChange={setFileList(k)}
        aria-invalid={!!errors[k]}
      />
    </Field>
  );

  return (
    <section class="job-submit">
      <PageHeader title="Submit a job">
        <a class="btn btn-plain" href={href('/jobs')}>
          Back to jobs
        </a>
      </PageHeader>
      {!canSubmit && <ErrorBox error="Your role (viewer) may not submit jobs; an operator or admin can." />}
      <ErrorBox error={refusal} />
      <form class="panel" onSubmit={onSubmit} noValidate aria-label="Submit a job">
        <div class="form-grid">
          {text('name', 'Name', 'letters, digits, space, . _ -', { required: true, maxLength: 128 })}
          <Field label="Cluster" error={errors.clusterName ?? clusters.error}>
            <select
              id="job-clusterName"
              value={cluster}
              onChange={set('clusterName')}
              aria-invalid={!!errors.clusterName}
            >
              {names.length === 0 && <option value="">{clusters.loading ? 'loading…' : 'no clusters'}</option>}
              {names.map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Language" error={errors.language}>
            <select id="job-language" value={v.language} onChange={set('language')}>
              <option value="SCALA">SCALA (default)</option>
              <option value="PYTHON">PYTHON</option>
            </select>
          </Field>
          {text(
            'jobClass',
            v.language === 'SCALA' ? 'Main class' : 'Main module',
            v.language === 'SCALA'
              ? 'the class to run, found in the first jar'
              : 'one of the pyFiles, with or without .py',
          )}
        </div>
        <fieldset class="form-group">
          <legend>Code</legend>
          <div class="form-grid">
            {upload(
              'pyFiles',
              'Python files (pyFiles)',
              '.py, .zip or .egg; one of them is the program',
              '.py,.zip,.egg',
            )}
            {upload('jars', 'Jars', 'a SCALA job needs one holding its main class', '.jar')}
            {upload('files', 'Other files', 'placed in the driver’s working directory')}
          </div>
        </fieldset>
        <fieldset class="form-group">
          <legend>Run</legend>
          <div class="form-grid">
            {area('args', 'Arguments', 'a;b;c — the program’s arguments')}
            {text('maxRetries', 'Retries (maxRetries)', '0 (default) to 100: further tries after a failed one', {
              inputMode: 'numeric',
            })}
            <SparkSettingsFields controls={controls} />
          </div>
        </fieldset>
        <fieldset class="form-group">
          <legend>Memory settings</legend>
          <div class="form-grid form-grid-narrow">
            <MemoryFields controls={controls} />
          </div>
        </fieldset>
        <div class="actions">
          <Button type="submit" variant="primary" busy={busy} disabled={!canSubmit}>
            Submit job
          </Button>
        </div>
      </form>
    </section>
  );
}
