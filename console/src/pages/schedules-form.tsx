// The schedule form, for creating (POST /schedule) and editing (PUT /schedule/{id}, only the changed fields),
// both multipart. The cron reads back in words as it is typed; the API's refusal (an invalid cron, a window
// in the past, …) shows next to its field and above the form.
import { get, post, put } from '../api';
import { LANGUAGES, type Schedule } from '../types';
import { Button, useAsync } from '../ui';
import {
  CodeFilesField,
  formBody,
  MEMORY_INITIAL,
  MemoryFieldset,
  memoryErrors,
  nameError,
  Refusal,
  useFiles,
  useForm,
  wholeError,
  type Values,
} from './groups-form';
import { describeCron } from './schedules-cron';
import { SparkSettingsFields } from './spark-fields';

const CRON_HINT = 'minute hour day-of-month month day-of-week (UTC), or @daily, @weekly, @every 30m …';

/** The API's first cron check (field count); the rest of its checks answer from the service. */
export function cronError(cron: string): string | undefined {
  const c = cron.trim().replace(/\s+/g, ' ');
  if (!c) return 'is required';
  if (c.startsWith('@')) return undefined;
  const n = c.split(' ').length;
  return n === 5
    ? undefined
    : `'${cron}' has ${n} fields; a cron expression has 5: minute hour day-of-month month day-of-week (e.g. '*/5 * * * *')`;
}

/** `datetime-local` value (the browser's time zone) ↔ epoch milliseconds. */
const toLocalInput = (ms?: number) => {
  if (!ms) return '';
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
};
const fromLocalInput = (s: string) => (s ? String(new Date(s).getTime()) : '');

function initialOf(s?: Schedule): Values {
  const mem = Object.fromEntries(
    Object.entries(s?.memorySettings ?? {}).map(([k, v]) => [
      k,
      k === 'dynamicAllocation' && v === false ? '' : String(v),
    ]),
  );
  return {
    ...(s ? {} : { name: '', language: 'PYTHON', clusterName: 'default' }),
    description: s?.description ?? '',
    cron: s?.cron ?? '',
    jobClass: s?.jobClass ?? '',
    args: s?.args.join(';') ?? '',
    jobConfig: Object.entries(s?.jobConfig ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(';'),
    tags: s?.tags ?? '',
    pyRequirements: s?.pyRequirements ?? '',
    packages: s?.packages ?? '',
    startTime: toLocalInput(s?.startTime),
    endTime: toLocalInput(s?.endTime),
    maxRetries: s ? String(s.maxRetries) : '',
    ...MEMORY_INITIAL,
    ...mem,
  };
}

/** Create when `schedule` is absent, else edit it; `onDone` gets the schedule's id. */
export function ScheduleForm({ schedule, onDone }: { schedule?: Schedule; onDone: (id: string) => void }) {
  const initial = initialOf(schedule);
  const form = useForm(schedule ? 'schedule-edit' : 'schedule-new', initial);
  const [files, onFiles] = useFiles();
  const clusters = useAsync(
    (signal) =>
      schedule ? Promise.resolve({ names: [] }) : get<{ names: string[] }>('/cluster/names', undefined, signal),
    [],
  );
  const v = form.values;
  const words = v.cron.trim() ? describeCron(v.cron) : undefined;

  const onSubmit = async (e: Event) => {
    e.preventDefault();
    const times = { startTime: fromLocalInput(v.startTime), endTime: fromLocalInput(v.endTime) };
    const all: Values = { ...v, ...times };
    let id = schedule?.id ?? '';
    const ok = await form.submit(
      () => ({
        ...(schedule ? {} : { name: nameError(v.name) }),
        cron: cronError(v.cron),
        jobClass: v.jobClass.trim() ? undefined : 'is required',
        maxRetries: wholeError(v.maxRetries, 0),
        ...memoryErrors(v),
      }),
      async () => {
        if (!schedule) {
          id = (await post<{ scheduleId: string }>('/schedule', formBody(all, files))).scheduleId;
          return;
        }
        const changed = Object.fromEntries(
          Object.entries(v)
            .filter(([k, x]) => x !== initial[k])
            .map(([k]) => [k, all[k]]),
        );
        await put(`/schedule/${schedule.id}`, formBody(changed, files, Object.keys(changed)));
      },
    );
    if (ok) onDone(id);
  };

  const language = schedule?.language ?? v.language;
  return (
    <form onSubmit={onSubmit} noValidate aria-label={schedule ? 'Edit the schedule' : 'Create a schedule'}>
      <Refusal form={form} />
      <div class="form-cols">
        {!schedule && form.input('name', 'Name', 'unique; letters, digits, space, . _ -', { maxLength: 128 })}
        {form.input('cron', 'Cron', words ?? CRON_HINT, { class: 'code', autoComplete: 'off' })}
        {!schedule && form.select('language', 'Language', LANGUAGES)}
        {!schedule &&
          form.select('clusterName', 'Cluster', clusters.data?.names.length ? clusters.data.names : ['default'])}
        {form.input(
          'jobClass',
          language === 'SCALA' ? 'Main class' : 'Main module',
          language === 'SCALA' ? 'the class to run, in the jars' : 'one of the pyFiles, with or without .py',
        )}
        {form.input('maxRetries', 'Retries (maxRetries)', '0 to 100, of every run', { inputMode: 'numeric' })}
        {form.input('startTime', 'No run before', 'your local time; empty: none', { type: 'datetime-local' })}
        {form.input('endTime', 'No run after', 'your local time; empty: none', { type: 'datetime-local' })}
      </div>
      <CodeFilesField
        id="schedule-files"
        language={language}
        label={`${language === 'SCALA' ? 'Jars' : 'Python files (pyFiles)'}${schedule ? ' to add' : ''}`}
        onFiles={onFiles}
      />
      <div class="form-cols">
        {form.area('args', 'Arguments', 'a;b;c')}
        <SparkSettingsFields controls={form} />
      </div>
      {form.area('description', 'Description')}
      <MemoryFieldset form={form} />
      <div class="actions form-actions">
        <Button type="submit" variant="primary" busy={form.busy}>
          {schedule ? 'Save changes' : 'Create schedule'}
        </Button>
      </div>
    </form>
  );
}
