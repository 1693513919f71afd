// The execute panel of a group's page: a job class (or, in a CODE group, code) and a JSON config, checked as
// JSON before sending; "Execute" waits for the result (POST /group/{id}/job/execute) and shows it, or the
// job's error with its stack trace, or the service's refusal; "Submit" starts it without waiting
// (POST /group/{id}/job/submit) and its result arrives in the results list below.
import { useState } from 'preact/hooks';
import { post } from '../api';
import type { Group, JobInstanceResult } from '../types';
import { Button, ErrorBox, errorText, Field, formatDuration, Pre } from '../ui';

type Outcome =
  { kind: 'result'; r: JobInstanceResult } | { kind: 'submitted'; id: string } | { kind: 'refused'; message: string };

/** The config as the API takes it: a JSON object; otherwise why not. */
export function parseConfig(text: string): { value?: Record<string, unknown>; error?: string } {
  if (!text.trim()) return { value: {} };
  try {
    const v: unknown = JSON.parse(text);
    if (v === null || typeof v !== 'object' || Array.isArray(v))
      return { error: 'must be a JSON object, e.g. {"n": "10"}' };
    return { value: v as Record<string, unknown> };
  } catch (e) {
    return { error: `not valid JSON: ${(e as Error).message}` };
  }
}

export function ExecutePanel({ group }: { group: Group }) {
  const code = group.kind === 'CODE';
  const [mode, setMode] = useState<'job' | 'code'>(code ? 'code' : 'job');
  const [jobClass, setJobClass] = useState('');
  const [source, setSource] = useState('');
  const [config, setConfig] = useState('{}');
  const [errors, setErrors] = useState<{ jobClass?: string; code?: string; config?: string }>({});
  const [busy, setBusy] = useState<'execute' | 'submit'>();
  const [outcome, setOutcome] = useState<Outcome>();

  const run = async (how: 'execute' | 'submit') => {
    const cfg = parseConfig(config);
    const found = {
      config: cfg.error,
      jobClass: mode === 'job' && !jobClass.trim() ? 'give the job class to run, as module.Class' : undefined,
      code: mode === 'code' && !source.trim() ? 'give the code to run' : undefined,
    };
    setErrors(found);
    const first = Object.entries(found).find(([, e]) => e)?.[0];
    if (first) {
      document.getElementById(`exec-${first}`)?.focus();
      return;
    }
    const body =
      mode === 'job'
        ? { type: 'interactive_job_execute', jobClass: jobClass.trim(), jobConfig: cfg.value }
        : { type: 'interactive_code_execute', code: source, jobConfig: cfg.value };
    setBusy(how);
    setOutcome(undefined);
    try {
      if (how === 'execute')
        setOutcome({ kind: 'result', r: await post<JobInstanceResult>(`/group/${group.id}/job/execute`, body) });
      else {
        const { jobInstanceId } = await post<{ jobInstanceId: string }>(`/group/${group.id}/job/submit`, body);
        setOutcome({ kind: 'submitted', id: jobInstanceId });
      }
    } catch (err) {
      setOutcome({ kind: 'refused', message: errorText(err) });
    } finally {
      setBusy(undefined);
    }
  };

  return (
    <form
      class="panel exec"
      aria-label="Execute in the group"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void run('execute');
      }}
    >
      <h2>Execute</h2>
      {code && (
        <fieldset class="exec-mode">
          <legend class="sr-only">What to run</legend>
          <label>
            <input type="radio" name="exec-mode" checked={mode === 'code'} onChange={() => setMode('code')} /> Code
          </label>
          <label>
            <input type="radio" name="exec-mode" checked={mode === 'job'} onChange={() => setMode('job')} /> Job class
          </label>
        </fieldset>
      )}
      {mode === 'job' ? (
        <Field
          label="Job class"
          hint={group.language === 'PYTHON' ? 'module.Class' : 'com.example.MyJob'}
          error={errors.jobClass}
        >
          <input
            id="exec-jobClass"
            value={jobClass}
            aria-invalid={!!errors.jobClass}
            onInput={(e) => setJobClass(e.currentTarget.value)}
          />
        </Field>
      ) : (
        <Field
          label="Code"
          hint={`${group.language === 'PYTHON' ? 'Python' : 'Scala'}; spark is defined`}
          error={errors.code}
        >
          <textarea
            id="exec-code"
            class="code"
            rows={5}
            value={source}
            aria-invalid={!!errors.code}
            onInput={(e) => setSource(e.currentTarget.value)}
          />
        </Field>
      )}
      <Field label="Config (JSON)" hint="an object, passed to run(spark, config)" error={errors.config}>
        <textarea
          id="exec-config"
          class="code"
          rows={3}
          value={config}
          aria-invalid={!!errors.config}
          onInput={(e) => setConfig(e.currentTarget.value)}
        />
      </Field>
      <div class="actions">
        <Button type="submit" variant="primary" busy={busy === 'execute'} disabled={!!busy}>
          Execute
        </Button>
        <Button busy={busy === 'submit'} disabled={!!busy} onClick={() => void run('submit')}>
          Submit without waiting
        </Button>
      </div>
      <div class="exec-output" role="region" aria-label="execution outcome" aria-live="polite" aria-busy={!!busy}>
        {busy === 'execute' && <p class="muted">Running…</p>}
        {outcome && <OutcomeView outcome={outcome} />}
      </div>
    </form>
  );
}

function OutcomeView({ outcome }: { outcome: Outcome }) {
  if (outcome.kind === 'refused') return <ErrorBox error={outcome.message} />;
  if (outcome.kind === 'submitted')
    return (
      <p>
        Submitted as <code>{outcome.id}</code>; its result appears in the results below.
      </p>
    );
  const r = outcome.r;
  const took = r.startTime && r.endTime ? formatDuration(r.endTime - r.startTime) : undefined;
  return (
    <div>
      <p class="muted">
        {r.error ? 'Failed' : 'Finished'}
        {took ? ` in ${took}` : ''}
        {r.jobId ? ` on ${r.jobId}` : ''}
      </p>
      {r.error ? (
        <>
          <ErrorBox error={r.error.message} />
          {r.error.stackTrace && <Pre value={r.error.stackTrace} label="Stack trace" />}
        </>
      ) : (
        <Pre value={r.result ?? '(no result)'} label="Result" />
      )}
    </div>
  );
}
