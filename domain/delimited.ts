// Parsers of the delimited strings of docs/api.md: Delimited strings. Each returns a value or throws FieldError naming the
// field, so the API answers 409 with a message a client can act on. Deterministic (no I/O).

export class FieldError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
    this.name = 'FieldError';
  }
}

const entries = (s: string, sep: string): string[] =>
  s
    .split(sep)
    .map((e) => e.trim())
    .filter((e) => e.length > 0);

/** `key=value;key2=value2` → record. Keys are unique; values may contain '='. */
export function parseTags(field: string, s: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!s) return out;
  for (const e of entries(s, ';')) {
    const i = e.indexOf('=');
    if (i <= 0) throw new FieldError(field, `entry '${e}' is not of the form key=value`);
    const key = e.slice(0, i).trim();
    if (key in out) throw new FieldError(field, `key '${key}' appears twice`);
    out[key] = e.slice(i + 1).trim();
  }
  return out;
}

/** Record → canonical `key=value;key2=value2` string, as the API returns tags. */
export const formatTags = (tags: Record<string, string>): string =>
  Object.entries(tags)
    .map(([k, v]) => `${k}=${v}`)
    .join(';');

/** `spark.key=value;spark.key2=value2` → record; every key must start with `spark.`. */
export function parseJobConfig(field: string, s: string | undefined): Record<string, string> {
  const out = parseTags(field, s);
  for (const key of Object.keys(out)) {
    if (!/^spark\.[A-Za-z0-9_.-]+$/.test(key)) {
      throw new FieldError(field, `key '${key}' must be a Spark property of the form spark.<key>`);
    }
  }
  return out;
}

const PY_NAME = /^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?(\[[A-Za-z0-9_,.-]+\])?$/;
const PY_VERSION = /^[A-Za-z0-9.*+!_-]+$/;

/** `name;name==1.2.3` → list of pip requirement strings. Only exact pins (==) are allowed. */
export function parsePyRequirements(field: string, s: string | undefined): string[] {
  if (!s) return [];
  return entries(s, ';').map((e) => {
    const [name, version, ...rest] = e.split('==').map((p) => p.trim());
    if (rest.length > 0 || !PY_NAME.test(name) || (version !== undefined && !PY_VERSION.test(version))) {
      throw new FieldError(field, `'${e}' is not a package name with an optional ==version`);
    }
    return version === undefined ? name : `${name}==${version}`;
  });
}

const MAVEN_PART = /^[A-Za-z0-9_.-]+$/;

/** `g:a:v,g2:a2:v2` → list of Maven coordinates. */
export function parsePackages(field: string, s: string | undefined): string[] {
  if (!s) return [];
  return entries(s, ',').map((e) => {
    const parts = e.split(':');
    if (parts.length !== 3 || !parts.every((p) => MAVEN_PART.test(p))) {
      throw new FieldError(field, `'${e}' is not a Maven coordinate groupId:artifactId:version`);
    }
    return e;
  });
}

/** `a;b;c` → ['a', 'b', 'c']. Empty entries are dropped; arguments keep inner spaces. */
export function parseArgs(_field: string, s: string | undefined): string[] {
  if (!s) return [];
  return s.split(';').filter((a) => a.trim().length > 0);
}

/** JVM memory: a whole number with unit k, m, g or t (case-insensitive), e.g. 512m, 2g. */
export function checkJvmMemory(field: string, s: string): string {
  if (!/^[1-9][0-9]*[kmgtKMGT]$/.test(s)) {
    throw new FieldError(field, `'${s}' is not a JVM memory size such as 512m or 2g (a number with unit k, m, g or t)`);
  }
  return s;
}

/** JVM memory string → bytes. */
export function jvmMemoryBytes(s: string): number {
  const n = Number(s.slice(0, -1));
  const unit = s.slice(-1).toLowerCase();
  return n * 1024 ** { k: 1, m: 2, g: 3, t: 4 }[unit as 'k' | 'm' | 'g' | 't'];
}

/** Kubernetes resource quantity (CPU or memory), e.g. 500m, 2, 1.5, 4Gi, 100M, 1e3. */
const K8S_QUANTITY = /^[+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$/;
export function checkQuantity(field: string, s: string): string {
  if (!K8S_QUANTITY.test(s)) throw new FieldError(field, `'${s}' is not a Kubernetes quantity such as 500m, 2 or 4Gi`);
  return s;
}

/** A string form field holding a whole number ≥ min. */
export function parseIntField(
  field: string,
  s: string | undefined,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  if (s === undefined || s === '') return undefined;
  if (!/^-?[0-9]+$/.test(s.trim())) throw new FieldError(field, `'${s}' is not a whole number`);
  const n = Number(s.trim());
  if (n < min || n > max) throw new FieldError(field, `${n} is out of range ${min}..${max}`);
  return n;
}

/** A string form field holding a boolean. */
export function parseBoolField(field: string, s: string | undefined): boolean | undefined {
  if (s === undefined || s === '') return undefined;
  const v = s.trim().toLowerCase();
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw new FieldError(field, `'${s}' is not true or false`);
}
