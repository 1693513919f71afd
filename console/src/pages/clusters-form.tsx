// The form that creates or edits a cluster: every field of the Cluster resource, grouped (general, the chosen
// type's own settings as GET /cluster/types lists them, storages, resources, Spark defaults). Secrets are write-only: the form never holds a stored one,
// says whether one is stored, and changes it only when the user types a new one or ticks "remove". The
// service validates; its message is shown above the buttons and, split by field, under each control.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError } from '../api';
import { Button, ErrorBox, errorText, Field } from '../ui';
import {
  fieldErrors,
  LIMIT_FIELDS,
  LIMIT_RANGES,
  MEMORY_FIELDS,
  newStorage,
  QUOTA_FIELDS,
  toBody,
  type ClusterTypeInfo,
  type ClusterValues,
  type SecretValue,
  type StorageValues,
} from './clusters-model';

const LABELS: Record<string, string> = {
  executors: 'Executors',
  driverCores: 'Driver cores',
  executorCores: 'Executor cores',
  driverMemory: 'Driver memory',
  executorMemory: 'Executor memory',
  initialExecutors: 'Initial executors',
  minExecutors: 'Min executors',
  maxExecutors: 'Max executors',
  limitsPod: 'Pods (limit)',
  limitsCpu: 'CPU (limit)',
  limitsMemory: 'Memory (limit)',
  requestsCpu: 'CPU (requests)',
  requestsMemory: 'Memory (requests)',
  defaultLimit: 'default limit',
  defaultRequest: 'default request',
  minRequest: 'min request',
  maxLimit: 'max limit',
  maxLimitRequestRatio: 'max limit/request ratio',
  cpuLimitRange: 'CPU',
  memoryLimitRange: 'Memory',
};

/**
 * How known type settings read in a form. Presentation only: a setting not named here (a new type's) gets its
 * field name as label and an input of its kind.
 */
export const SETTING_LOOKS: Record<string, { label: string; placeholder?: string; multiline?: boolean }> = {
  threads: { label: 'Threads (local[N])' },
  temporalAddress: { label: 'Temporal address seen from the drivers', placeholder: 'temporal-frontend.example:7233' },
  namespace: { label: 'Drivers namespace', placeholder: 'the service default (K8S_NAMESPACE)' },
  sparkImage: { label: 'Spark image', placeholder: 'the service default (K8S_SPARK_IMAGE)' },
  username: { label: 'Username' },
  clientKeyAlgorithm: { label: 'Client key algorithm' },
  token: { label: 'Bearer token' },
  password: { label: 'Password' },
  clientKeyPassphrase: { label: 'Client key passphrase' },
  caCert: { label: 'CA certificate (PEM)', multiline: true },
  clientCert: { label: 'Client certificate (PEM)', multiline: true },
  clientKey: { label: 'Client key (PEM)', multiline: true },
  allowedAccessSettings: { label: 'Allowed access settings', placeholder: 'secrets, volumes' },
  resourceManagerAddress: { label: 'ResourceManager address (IPC)', placeholder: 'the URL’s host, port 8032' },
  hadoopConf: { label: 'Hadoop configuration', placeholder: 'fs.defaultFS=hdfs://namenode:8020' },
  queue: { label: 'YARN queue', placeholder: 'default' },
};

const HINTS: Record<ClusterTypeInfo['kinds'][string], string | undefined> = {
  text: undefined,
  number: undefined,
  secret: undefined,
  list: 'comma-separated',
  map: 'key=value, one per line',
};

/** A write-only secret: empty means "keep what is stored"; the hint says whether one is. */
function SecretInput({
  label,
  value,
  onChange,
  error,
  multiline,
}: {
  label: string;
  value: SecretValue;
  onChange: (v: SecretValue) => void;
  error?: string;
  multiline?: boolean;
}) {
  const hint = value.stored
    ? 'A value is stored and never shown. Leave empty to keep it, or type a new one to replace it.'
    : 'Not set. Stored encrypted; never shown again.';
  const props = {
    autoComplete: 'off',
    spellcheck: false,
    value: value.value,
    placeholder: value.stored ? '(stored, hidden)' : '',
    disabled: value.remove,
    onInput: (e: { currentTarget: { value: string } }) => onChange({ ...value, value: e.currentTarget.value }),
  };
  return (
    <div class="secret">
      <Field label={label} hint={hint} error={error}>
        {multiline ? <textarea class="code" rows={3} {...props} /> : <input type="password" {...props} />}
      </Field>
      {value.stored && (
        <label class="check">
          <input
            type="checkbox"
            checked={value.remove}
            onChange={(e) => onChange({ ...value, value: '', remove: e.currentTarget.checked })}
          />
          Remove the stored {label.toLowerCase()}
        </label>
      )}
    </div>
  );
}

function Section({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <fieldset class="cluster-section">
      <legend>{title}</legend>
      {children}
    </fieldset>
  );
}

export function ClusterForm({
  initial,
  types,
  editing,
  submitLabel,
  onSubmit,
  onCancel,
}: {
  initial: ClusterValues;
  /** GET /cluster/types: which types there are and the settings of each. */
  types: ClusterTypeInfo[];
  editing: boolean;
  submitLabel: string;
  /** Sends the body; rejects with the service's error. */
  onSubmit: (body: Record<string, unknown>) => Promise<void>;
  onCancel: () => void;
}) {
  const [v, setV] = useState(initial);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const errors = fieldErrors(error);
  const err = (path: string) => errors.get(path);
  const set = (patch: Partial<ClusterValues>) => setV((prev) => ({ ...prev, ...patch }));
  const setSecret = (k: string) => (s: SecretValue) => setV((p) => ({ ...p, secrets: { ...p.secrets, [k]: s } }));
  // A map's messages name its keys (hadoopConf.fs.defaultFS): all of them under its field.
  const errUnder = (field: string) =>
    [...errors]
      .filter(([k]) => k === field || k.startsWith(`${field}.`))
      .map(([k, m]) => (k === field ? m : `${k.slice(field.length + 1)}: ${m}`))
      .join('; ') || undefined;
  const setSetting = (k: string) => (x: string) => setV((p) => ({ ...p, settings: { ...p.settings, [k]: x } }));
  const setStorage = (row: number, patch: Partial<StorageValues>) =>
    setV((p) => ({ ...p, storages: p.storages.map((s) => (s.row === row ? { ...s, ...patch } : s)) }));
  const input = (label: string, value: string, onInput: (s: string) => void, path: string, extra = {}) => (
    <Field key={label} label={label} error={err(path)}>
      <input value={value} onInput={(e) => onInput(e.currentTarget.value)} {...extra} />
    </Field>
  );
  const type = types.find((t) => t.type === v.type) ?? types[0];
  const typeSettings = type.settings.map((field) => ({
    field,
    kind: type.kinds[field] ?? 'text',
    looks: SETTING_LOOKS[field] ?? { label: field },
  }));
  // Messages naming no field of the form (or a field the form does not show) stay in the box above the buttons.
  const shown = new Set(['name', 'description', 'type', 'url', 'sparkStorage', ...type.settings]);
  const general = [...errors]
    .filter(([k]) => !shown.has(k) && !type.settings.some((f) => k.startsWith(`${f}.`)))
    .map(([k, m]) => (k ? `${k}: ${m}` : m));

  return (
    <form
      class="cluster-form"
      noValidate={false}
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(undefined);
        try {
          await onSubmit(toBody(v, editing, type));
        } catch (e2) {
          setError(e2 instanceof ApiError ? e2.message : errorText(e2));
        } finally {
          setBusy(false);
        }
      }}
    >
      <Section title="General">
        <div class="form-grid">
          {input('Cluster name', v.name, (name) => set({ name }), 'name', { required: true, maxLength: 128 })}
          <Field label="Type" error={err('type')}>
            <select value={v.type} onChange={(e) => set({ type: e.currentTarget.value as ClusterValues['type'] })}>
              {types.map((t) => (
                <option key={t.type} value={t.type}>
                  {t.type}: {t.title}
                </option>
              ))}
            </select>
          </Field>
          {type.url !== null && input(type.url, v.url, (url) => set({ url }), 'url', { required: true, type: 'url' })}
        </div>
        <Field label="Description" error={err('description')}>
          <textarea rows={2} value={v.description} onInput={(e) => set({ description: e.currentTarget.value })} />
        </Field>
      </Section>

      {typeSettings.length > 0 && (
        <Section title={`Settings of ${type.type} clusters`}>
          <div class="form-grid">
            {typeSettings
              .filter((t) => !t.looks.multiline && t.kind !== 'map')
              .map(({ field, kind, looks }) =>
                kind === 'secret' ? (
                  <SecretInput
                    key={field}
                    label={looks.label}
                    value={v.secrets[field] ?? { stored: false, value: '', remove: false }}
                    onChange={setSecret(field)}
                    error={err(field)}
                  />
                ) : (
                  <Field key={field} label={looks.label} hint={HINTS[kind]} error={err(field)}>
                    <input
                      value={v.settings[field] ?? ''}
                      onInput={(e) => setSetting(field)(e.currentTarget.value)}
                      placeholder={looks.placeholder}
                      {...(kind === 'number' ? { type: 'number', min: 1 } : { autoComplete: 'off' })}
                    />
                  </Field>
                ),
              )}
          </div>
          <div class="form-grid form-grid-wide">
            {typeSettings
              .filter((t) => t.looks.multiline || t.kind === 'map')
              .map(({ field, kind, looks }) =>
                kind === 'secret' ? (
                  <SecretInput
                    key={field}
                    label={looks.label}
                    value={v.secrets[field] ?? { stored: false, value: '', remove: false }}
                    onChange={setSecret(field)}
                    error={errUnder(field)}
                    multiline
                  />
                ) : (
                  <Field key={field} label={looks.label} hint={HINTS[kind]} error={errUnder(field)}>
                    <textarea
                      class="code"
                      rows={3}
                      value={v.settings[field] ?? ''}
                      placeholder={looks.placeholder}
                      onInput={(e) => setSetting(field)(e.currentTarget.value)}
                    />
                  </Field>
                ),
              )}
          </div>
        </Section>
      )}

      <Section title="Storages">
        <div class="form-grid">
          {input(
            'Spark storage (key of the storage drivers read artifacts from)',
            v.sparkStorage,
            (s) => set({ sparkStorage: s }),
            'sparkStorage',
          )}
          {input('Metastore name', v.metastoreName, (m) => set({ metastoreName: m }), 'metastoreName')}
        </div>
        {v.storages.map((s) => {
          const at = `storages.${s.key.trim()}`;
          return (
            <fieldset key={s.row} class="storage">
              <legend>Storage {s.key || '(new)'}</legend>
              <div class="form-grid">
                {input('Storage key', s.key, (key) => setStorage(s.row, { key }), 'storages', { required: true })}
                {input('Endpoint', s.endpoint, (endpoint) => setStorage(s.row, { endpoint }), `${at}.endpoint`, {
                  placeholder: 'https://s3.example.com',
                })}
                {input('Region', s.region, (region) => setStorage(s.row, { region }), `${at}.region`)}
                {input(
                  'Spark bucket',
                  s.sparkBucket,
                  (b) => setStorage(s.row, { sparkBucket: b }),
                  `${at}.sparkBucket`,
                )}
                {input('Data bucket', s.dataBucket, (b) => setStorage(s.row, { dataBucket: b }), `${at}.dataBucket`)}
                {input(
                  'Extra buckets (comma-separated)',
                  s.extraBuckets,
                  (b) => setStorage(s.row, { extraBuckets: b }),
                  `${at}.extraBuckets`,
                )}
                <SecretInput
                  label="Access key"
                  value={s.accessKey}
                  onChange={(accessKey) => setStorage(s.row, { accessKey })}
                  error={err(`${at}.accessKey`)}
                />
                <SecretInput
                  label="Secret key"
                  value={s.secretKey}
                  onChange={(secretKey) => setStorage(s.row, { secretKey })}
                  error={err(`${at}.secretKey`)}
                />
              </div>
              <Button onClick={() => set({ storages: v.storages.filter((x) => x.row !== s.row) })}>
                Remove storage {s.key}
              </Button>
            </fieldset>
          );
        })}
        <Button onClick={() => set({ storages: [...v.storages, newStorage(v.storages.length ? '' : 's3')] })}>
          Add a storage
        </Button>
      </Section>

      <Section title="Resources">
        <h3 class="sub">Memory settings of drivers and executors</h3>
        <div class="form-grid form-grid-narrow">
          {MEMORY_FIELDS.map((k) =>
            input(LABELS[k], v.memory[k], (x) => set({ memory: { ...v.memory, [k]: x } }), `memorySettings.${k}`),
          )}
          <label class="check">
            <input
              type="checkbox"
              checked={v.dynamicAllocation}
              onChange={(e) => set({ dynamicAllocation: e.currentTarget.checked })}
            />
            Dynamic allocation
          </label>
        </div>
        <h3 class="sub">Resource quota (checked on every job, group and schedule)</h3>
        <div class="form-grid form-grid-narrow">
          {QUOTA_FIELDS.map((k) =>
            input(LABELS[k], v.quota[k], (x) => set({ quota: { ...v.quota, [k]: x } }), `resourceQuota.${k}`, {
              placeholder: k.endsWith('Memory') ? '64Gi' : k === 'limitsPod' ? '40' : '16',
            }),
          )}
        </div>
        {LIMIT_RANGES.map((r) => (
          <div key={r}>
            <h3 class="sub">{LABELS[r]} limit range (stored, not enforced)</h3>
            <div class="form-grid form-grid-narrow">
              {LIMIT_FIELDS.map((k) =>
                input(
                  `${LABELS[r]} ${LABELS[k]}`,
                  v.limitRange[r][k],
                  (x) => set({ limitRange: { ...v.limitRange, [r]: { ...v.limitRange[r], [k]: x } } }),
                  `limitRange.${r}.${k}`,
                ),
              )}
            </div>
          </div>
        ))}
      </Section>

      <Section title="Spark defaults">
        <Field
          label="Default application config (k=v per line or ;-separated; a job's jobConfig wins)"
          error={err('defaultApplicationConfig')}
        >
          <textarea
            class="code"
            rows={4}
            value={v.defaultApplicationConfig}
            onInput={(e) => set({ defaultApplicationConfig: e.currentTarget.value })}
          />
        </Field>
      </Section>

      <div class="form-footer">
        {general.length > 0 && <ErrorBox error={general.join('\n')} />}
        {error && general.length === 0 && (
          <p class="error-text" role="alert">
            {error}
          </p>
        )}
        <div class="actions">
          <Button type="submit" variant="primary" busy={busy}>
            {submitLabel}
          </Button>
          <Button onClick={onCancel}>Cancel</Button>
        </div>
      </div>
    </form>
  );
}
