// The cluster form's data, apart from its looks: the Cluster resource → form values (every value a string, as
// inputs hold them), and form values → the JSON body of POST /cluster or PUT /cluster/{id}. A type's own settings
// come from GET /cluster/types (their names and kinds), so a new cluster type needs no change here. Secrets are never
// in the form's initial values: the API returns them masked, and a secret is sent only when the user typed a
// new one (or asked to remove it); an untouched storage secret goes back as the mask, which keeps it.
import { MEMORY_FIELDS as ALL_MEMORY_FIELDS, type Cluster } from '../types';

/** What the API returns in place of a stored secret, and takes back to keep it. */
export const MASK = '******';

export const QUOTA_FIELDS = ['limitsPod', 'limitsCpu', 'limitsMemory', 'requestsCpu', 'requestsMemory'] as const;
export const LIMIT_RANGES = ['cpuLimitRange', 'memoryLimitRange'] as const;
export const LIMIT_FIELDS = [
  'defaultLimit',
  'defaultRequest',
  'minRequest',
  'maxLimit',
  'maxLimitRequestRatio',
] as const;
/** The memory settings' text fields, domain/memory.ts's without dynamicAllocation (a checkbox of its own). */
export const MEMORY_FIELDS = ALL_MEMORY_FIELDS.filter(
  (k): k is Exclude<(typeof ALL_MEMORY_FIELDS)[number], 'dynamicAllocation'> => k !== 'dynamicAllocation',
);

/** A secret input: `stored` says whether the service holds one; `value` is what the user typed. */
export interface SecretValue {
  stored: boolean;
  value: string;
  remove: boolean;
}

export interface StorageValues {
  /** Stable key of the row while editing (the storage's key may be renamed). */
  row: number;
  key: string;
  sparkBucket: string;
  dataBucket: string;
  extraBuckets: string;
  endpoint: string;
  region: string;
  accessKey: SecretValue;
  secretKey: SecretValue;
}

/** A cluster type as GET /cluster/types describes it (activities/adapters/cluster-types.ts). */
export interface ClusterTypeInfo {
  type: Cluster['type'];
  title: string;
  sparkDeployMode: string;
  /** What its `url` is; null: the type sets it itself. */
  url: string | null;
  settings: string[];
  kinds: Record<string, 'text' | 'number' | 'map' | 'list' | 'secret'>;
  namespaces: boolean;
  sqlEngines: readonly string[];
}

/** The fields every cluster has, whatever its type: never one of a type's settings in the form. */
const COMMON_FIELDS = new Set([
  'id',
  'name',
  'description',
  'type',
  'url',
  'sparkMaster',
  'sparkDeployMode',
  'sparkStorage',
  'metastoreName',
  'storages',
  'memorySettings',
  'defaultApplicationConfig',
  'resourceQuota',
  'limitRange',
  'createdTime',
]);

export interface ClusterValues {
  name: string;
  description: string;
  type: Cluster['type'];
  url: string;
  /**
   * Every type's own settings as inputs hold them, by field (only the chosen type's are sent): text; a number's
   * digits; a list comma-separated; a map as `key=value` lines. '' is unset (in an edit: the service's default).
   */
  settings: Record<string, string>;
  /** The write-only settings (kind `secret`), by field. */
  secrets: Record<string, SecretValue>;
  sparkStorage: string;
  metastoreName: string;
  storages: StorageValues[];
  memory: Record<(typeof MEMORY_FIELDS)[number], string>;
  dynamicAllocation: boolean;
  defaultApplicationConfig: string;
  quota: Record<(typeof QUOTA_FIELDS)[number], string>;
  limitRange: Record<(typeof LIMIT_RANGES)[number], Record<(typeof LIMIT_FIELDS)[number], string>>;
}

const secret = (masked: unknown): SecretValue => ({ stored: masked === MASK, value: '', remove: false });
/** A setting's value as its input holds it. */
const settingText = (v: unknown): string =>
  Array.isArray(v)
    ? v.join(', ')
    : v && typeof v === 'object'
      ? Object.entries(v)
          .map(([k, x]) => `${k}=${String(x)}`)
          .join('\n')
      : str(v);
const str = (v: unknown): string => (v === undefined || v === null ? '' : String(v));
const record = <K extends string>(keys: readonly K[], from: Record<string, unknown> | undefined): Record<K, string> =>
  Object.fromEntries(keys.map((k) => [k, str(from?.[k])])) as Record<K, string>;

let rows = 0;
export const newStorage = (key = ''): StorageValues => ({
  row: ++rows,
  key,
  sparkBucket: '',
  dataBucket: '',
  extraBuckets: '',
  endpoint: '',
  region: '',
  accessKey: secret(undefined),
  secretKey: secret(undefined),
});

/** Form values of a cluster being edited, or of a new one (`c` undefined). */
export function toValues(c?: Cluster): ClusterValues {
  return {
    name: c?.name ?? '',
    description: c?.description ?? '',
    type: c?.type ?? 'k8s',
    // A type that sets its url itself (local) shows none.
    url: c && c.url !== c.type ? c.url : '',
    settings: Object.fromEntries(
      Object.entries(c ?? {})
        .filter(([k, x]) => !COMMON_FIELDS.has(k) && x !== MASK)
        .map(([k, x]) => [k, settingText(x)]),
    ),
    secrets: Object.fromEntries(
      Object.entries(c ?? {})
        .filter(([, x]) => x === MASK)
        .map(([k, x]) => [k, secret(x)]),
    ),
    sparkStorage: c?.sparkStorage ?? 's3',
    metastoreName: c?.metastoreName ?? '',
    storages: Object.entries(c?.storages ?? {}).map(([key, s]) => ({
      ...newStorage(key),
      sparkBucket: s.sparkBucket ?? '',
      dataBucket: s.dataBucket ?? '',
      extraBuckets: (s.extraBuckets ?? []).join(', '),
      endpoint: s.endpoint ?? '',
      region: s.region ?? '',
      accessKey: secret(s.accessKey),
      secretKey: secret(s.secretKey),
    })),
    memory: record(MEMORY_FIELDS, c?.memorySettings),
    dynamicAllocation: c?.memorySettings.dynamicAllocation ?? false,
    defaultApplicationConfig: c?.defaultApplicationConfig ?? '',
    quota: record(QUOTA_FIELDS, c?.resourceQuota),
    limitRange: {
      cpuLimitRange: record(LIMIT_FIELDS, c?.limitRange?.cpuLimitRange),
      memoryLimitRange: record(LIMIT_FIELDS, c?.limitRange?.memoryLimitRange),
    },
  };
}

/** Only the non-empty entries, trimmed; undefined when none. */
function filled(r: Record<string, string>): Record<string, string> | undefined {
  const out = Object.fromEntries(
    Object.entries(r)
      .map(([k, v]) => [k, v.trim()])
      .filter(([, v]) => v),
  );
  return Object.keys(out).length ? out : undefined;
}

/** What to send for a secret: a new value, '' to remove it, the mask to keep it (`keepWithMask`), or nothing. */
function secretOut(s: SecretValue, keepWithMask: boolean): string | undefined {
  if (s.value) return s.value;
  if (s.remove && s.stored) return '';
  return s.stored && keepWithMask ? MASK : undefined;
}

/** `key=value` lines (blank lines skipped; a line without `=` is a key with an empty value, which the API refuses). */
export function parseMap(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const at = line.indexOf('=');
    if (at < 0) out[line.trim()] = '';
    else out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return out;
}

/** The type's own settings of the body, each by its kind. */
function settingsBody(v: ClusterValues, type: ClusterTypeInfo, editing: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const field of type.settings) {
    const kind = type.kinds[field] ?? 'text';
    if (kind === 'secret') {
      // Left out, a cluster secret stays as stored.
      const out = secretOut(v.secrets[field] ?? secret(undefined), false);
      if (out !== undefined) body[field] = out;
      continue;
    }
    const value = (v.settings[field] ?? '').trim();
    // Cleared while editing: '' (an empty list or map) puts the service's default back; a number stays.
    if (!value && (!editing || kind === 'number')) continue;
    if (kind === 'number') body[field] = Number(value);
    else if (kind === 'list')
      body[field] = value
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
    else if (kind === 'map') body[field] = parseMap(value);
    else body[field] = value;
  }
  return body;
}

/**
 * The request body. `editing`: PUT, where a field given replaces the stored one, so cleared text fields go as
 * '' and objects (storages, quota, limit range) are sent whole; a new cluster leaves empty fields out. `type`:
 * the chosen type as GET /cluster/types describes it.
 */
export function toBody(v: ClusterValues, editing: boolean, type: ClusterTypeInfo): Record<string, unknown> {
  const body: Record<string, unknown> = { name: v.name.trim(), type: v.type };
  const text = (field: string, value: string) => {
    if (value.trim() || editing) body[field] = value.trim();
  };
  text('description', v.description);
  if (v.sparkStorage.trim()) body.sparkStorage = v.sparkStorage.trim();
  text('metastoreName', v.metastoreName);
  text('defaultApplicationConfig', v.defaultApplicationConfig);
  if (type.url !== null && v.url.trim()) body.url = v.url.trim();
  Object.assign(body, settingsBody(v, type, editing));
  const storages = Object.fromEntries(
    v.storages
      .filter((s) => s.key.trim())
      .map((s) => {
        const extra = s.extraBuckets
          .split(',')
          .map((b) => b.trim())
          .filter(Boolean);
        const plain = filled({
          sparkBucket: s.sparkBucket,
          dataBucket: s.dataBucket,
          endpoint: s.endpoint,
          region: s.region,
        });
        // `storages` is replaced whole on update: an untouched stored secret goes back as the mask.
        const accessKey = secretOut(s.accessKey, true);
        const secretKey = secretOut(s.secretKey, true);
        return [
          s.key.trim(),
          {
            type: 's3',
            ...plain,
            ...(extra.length ? { extraBuckets: extra } : {}),
            ...(accessKey !== undefined ? { accessKey } : {}),
            ...(secretKey !== undefined ? { secretKey } : {}),
          },
        ];
      }),
  );
  if (Object.keys(storages).length || editing) body.storages = storages;
  const memory = filled(v.memory);
  if (memory || v.dynamicAllocation || editing)
    body.memorySettings = { ...memory, dynamicAllocation: String(v.dynamicAllocation) };
  const quota = filled(v.quota);
  if (quota || editing) body.resourceQuota = quota ?? {};
  const cpu = filled(v.limitRange.cpuLimitRange);
  const mem = filled(v.limitRange.memoryLimitRange);
  if (cpu || mem || editing)
    body.limitRange = { ...(cpu ? { cpuLimitRange: cpu } : {}), ...(mem ? { memoryLimitRange: mem } : {}) };
  return body;
}

/**
 * The API's validation message (`field.path: why; other: why`) split by field, so each form control can show
 * its own part; what names no field stays under `''`.
 */
export function fieldErrors(message: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!message) return out;
  for (const part of message.split('; ')) {
    const m = /^([A-Za-z][\w.-]*): (.+)$/s.exec(part);
    const [field, why] = m ? [m[1], m[2]] : ['', part];
    out.set(field, out.has(field) ? `${out.get(field)}; ${why}` : why);
  }
  return out;
}
