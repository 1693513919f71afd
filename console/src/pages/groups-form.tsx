// Form pieces the group and schedule forms share: controls bound to one object of string values, the checks
// the API makes on names, whole numbers and memory settings, the memory fieldset (spark-fields.tsx), and the API's refusal
// shown above the form and next to the field its message names (`cron: …` → the cron field).
import type { InputHTMLAttributes, JSX } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError } from '../api';
import { MEMORY_FIELDS } from '../types';
import { errorText, ErrorBox, Field } from '../ui';
import { MemoryFields } from './spark-fields';

export type Values = Record<string, string>;
export type Errors = Record<string, string | undefined>;

/** Empty memory values, for a form's initial values. */
export const MEMORY_INITIAL: Values = Object.fromEntries(MEMORY_FIELDS.map((k) => [k, '']));
const MIN_OF: Record<string, number> = { driverCores: 1, executorCores: 1 };

/** The API's name rule (api/schemas.ts). */
export function nameError(v: string): string | undefined {
  const s = v.trim();
  if (!s) return 'must not be empty';
  if (s.length > 128) return 'must be at most 128 characters';
  if (!/^[A-Za-z0-9][A-Za-z0-9 ._-]*$/.test(s))
    return 'must start with a letter or digit and contain only letters, digits, space, . _ -';
  return undefined;
}

export function wholeError(v: string, min: number): string | undefined {
  if (!v.trim()) return undefined;
  if (!/^[0-9]+$/.test(v.trim())) return 'must be a whole number';
  return Number(v) < min ? `must be at least ${min}` : undefined;
}

export function memoryErrors(v: Values): Errors {
  const out: Errors = {};
  for (const k of MEMORY_FIELDS) {
    if (k === 'dynamicAllocation') continue;
    if (k.endsWith('Memory')) {
      const x = v[k]?.trim();
      if (x && !/^[1-9][0-9]*[kmgt]$/i.test(x))
        out[k] = `'${x}' is not a JVM memory size such as 512m or 2g (a number with unit k, m, g or t)`;
    } else out[k] = wholeError(v[k] ?? '', MIN_OF[k] ?? 0);
  }
  return out;
}

/** A multipart body of the non-empty values (`keep`: also sent when empty, e.g. to clear a field) and files. */
export function formBody(v: Values, files: Record<string, File[]> = {}, keep: string[] = []): FormData {
  const f = new FormData();
  for (const [k, x] of Object.entries(v)) if (x.trim() !== '' || keep.includes(k)) f.append(k, x.trim());
  for (const [k, list] of Object.entries(files)) for (const file of list) f.append(k, file, file.name);
  return f;
}

export interface FormState {
  values: Values;
  errors: Errors;
  refusal: string | undefined;
  busy: boolean;
  set(k: string, v: string): void;
  /** Checks (`check` gives the errors found), then runs `send`; an API refusal lands next to its field. */
  submit(check: () => Errors, send: () => Promise<unknown>): Promise<boolean>;
  input(k: string, label: string, hint?: string, props?: InputHTMLAttributes<HTMLInputElement>): JSX.Element;
  area(k: string, label: string, hint?: string, rows?: number): JSX.Element;
  select(k: string, label: string, options: string[], hint?: string): JSX.Element;
}

/** `prefix` keeps the ids of two forms on one page apart. */
export function useForm(prefix: string, initial: Values): FormState {
  const [values, setValues] = useState(initial);
  const [errors, setErrors] = useState<Errors>({});
  const [refusal, setRefusal] = useState<string>();
  const [busy, setBusy] = useState(false);
  const id = (k: string) => `${prefix}-${k}`;
  const set = (k: string, v: string) => {
    setValues((old) => ({ ...old, [k]: v }));
    if (errors[k]) setErrors((old) => ({ ...old, [k]: undefined }));
  };
  const bind = (k: string) => ({
    id: id(k),
    name: k,
    value: values[k] ?? '',
    'aria-invalid': !!errors[k],
    onInput: (e: JSX.TargetedEvent<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>) =>
      set(k, e.currentTarget.value),
  });
  return {
    values,
    errors,
    refusal,
    busy,
    set,
    async submit(check, send) {
      setRefusal(undefined);
      const found = Object.fromEntries(Object.entries(check()).filter(([, e]) => e));
      setErrors(found);
      const first = Object.keys(found)[0];
      if (first) {
        document.getElementById(id(first))?.focus();
        return false;
      }
      setBusy(true);
      try {
        await send();
        return true;
      } catch (err) {
        const message = errorText(err);
        const field = /^([A-Za-z]+)[:.]/.exec(message)?.[1];
        if (field && field in values) setErrors({ [field]: message.replace(/^[A-Za-z]+:\s*/, '') });
        setRefusal(err instanceof ApiError && err.status ? `${message} (${err.status})` : message);
        return false;
      } finally {
        setBusy(false);
      }
    },
    input: (k, label, hint, props = {}) => (
      <Field label={label} hint={hint} error={errors[k]}>
        <input {...bind(k)} {...props} />
      </Field>
    ),
    area: (k, label, hint, rows = 2) => (
      <Field label={label} hint={hint} error={errors[k]}>
        <textarea {...bind(k)} class="code" rows={rows} />
      </Field>
    ),
    select: (k, label, options, hint) => (
      <Field label={label} hint={hint} error={errors[k]}>
        <select {...bind(k)} onChange={(e) => set(k, e.currentTarget.value)}>
          {options.map((o) => (
            <option key={o} value={o}>
              {o || 'not set'}
            </option>
          ))}
        </select>
      </Field>
    ),
  };
}

/** The memory settings of a form, folded away until opened. */
export function MemoryFieldset({ form }: { form: FormState }) {
  return (
    <details class="form-more">
      <summary>Memory settings</summary>
      <div class="form-cols form-cols-narrow">
        <MemoryFields controls={form} />
      </div>
    </details>
  );
}

/** The service's refusal of the form, above it. */
export function Refusal({ form }: { form: FormState }) {
  return <ErrorBox error={form.refusal} />;
}

/** Files chosen in a file input, kept in a state object by field. */
export function useFiles(): [Record<string, File[]>, (k: string) => (e: JSX.TargetedEvent<HTMLInputElement>) => void] {
  const [files, setFiles] = useState<Record<string, File[]>>({});
  return [files, (k) => (e) => setFiles((old) => ({ ...old, [k]: Array.from(e.currentTarget.files ?? []) }))];
}

/**
 * The file input of the code a group or schedule loads: jars for SCALA, Python modules (pyFiles) otherwise,
 * kept by `onFiles` under that field's name.
 */
export function CodeFilesField(props: {
  id: string;
  language: string;
  label: string;
  hint?: string;
  onFiles: (k: string) => (e: JSX.TargetedEvent<HTMLInputElement>) => void;
}) {
  const scala = props.language === 'SCALA';
  return (
    <label class="field">
      <span class="field-label">{props.label}</span>
      <input
        id={props.id}
        type="file"
        multiple
        accept={scala ? '.jar' : '.py,.zip,.egg'}
        onChange={props.onFiles(scala ? 'jars' : 'pyFiles')}
      />
      {props.hint && <span class="field-hint">{props.hint}</span>}
    </label>
  );
}

/** The field name a group's or schedule's code files go under. */
export const codeFilesField = (language: string): 'jars' | 'pyFiles' => (language === 'SCALA' ? 'jars' : 'pyFiles');
