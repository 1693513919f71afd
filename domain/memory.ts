// Memory settings (docs/api.md: Memory settings): form fields (all strings) → typed settings → Spark properties.
import { checkJvmMemory, FieldError, parseBoolField, parseIntField } from './delimited';
import type { MemorySettings } from './types';

export const MEMORY_FIELDS = [
  'executors',
  'driverCores',
  'executorCores',
  'driverMemory',
  'executorMemory',
  'dynamicAllocation',
  'initialExecutors',
  'minExecutors',
  'maxExecutors',
] as const;
export type MemoryForm = Partial<Record<(typeof MEMORY_FIELDS)[number], string>>;

/**
 * Parses the memory form fields. `base` supplies values for fields the form leaves out (updates).
 * minExecutors is read as the lower bound and maxExecutors as the upper bound, as their names say.
 */
export function parseMemorySettings(form: MemoryForm, base?: MemorySettings): MemorySettings {
  const int = (
    f: 'executors' | 'driverCores' | 'executorCores' | 'initialExecutors' | 'minExecutors' | 'maxExecutors',
    min: number,
  ) => (form[f] !== undefined && form[f] !== '' ? parseIntField(f, form[f], min, 10_000) : base?.[f]);
  const mem = (f: 'driverMemory' | 'executorMemory') =>
    form[f] !== undefined && form[f] !== '' ? checkJvmMemory(f, form[f]!.trim()) : base?.[f];
  const m: MemorySettings = {
    executors: int('executors', 0),
    driverCores: int('driverCores', 1),
    executorCores: int('executorCores', 1),
    driverMemory: mem('driverMemory'),
    executorMemory: mem('executorMemory'),
    dynamicAllocation: parseBoolField('dynamicAllocation', form.dynamicAllocation) ?? base?.dynamicAllocation ?? false,
    initialExecutors: int('initialExecutors', 0),
    minExecutors: int('minExecutors', 0),
    maxExecutors: int('maxExecutors', 0),
  };
  if (m.minExecutors !== undefined && m.maxExecutors !== undefined && m.minExecutors > m.maxExecutors) {
    throw new FieldError('minExecutors', `${m.minExecutors} is greater than maxExecutors ${m.maxExecutors}`);
  }
  if (m.initialExecutors !== undefined) {
    if (m.minExecutors !== undefined && m.initialExecutors < m.minExecutors)
      throw new FieldError('initialExecutors', `${m.initialExecutors} is below minExecutors ${m.minExecutors}`);
    if (m.maxExecutors !== undefined && m.initialExecutors > m.maxExecutors)
      throw new FieldError('initialExecutors', `${m.initialExecutors} is above maxExecutors ${m.maxExecutors}`);
  }
  return stripUndefined(m);
}

export function stripUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** Spark properties that realise the settings; explicit jobConfig entries win over these. */
export function memorySparkConf(m: MemorySettings): Record<string, string> {
  const c: Record<string, string> = {};
  if (m.executors !== undefined) c['spark.executor.instances'] = String(m.executors);
  if (m.driverCores !== undefined) c['spark.driver.cores'] = String(m.driverCores);
  if (m.executorCores !== undefined) c['spark.executor.cores'] = String(m.executorCores);
  if (m.driverMemory !== undefined) c['spark.driver.memory'] = m.driverMemory;
  if (m.executorMemory !== undefined) c['spark.executor.memory'] = m.executorMemory;
  c['spark.dynamicAllocation.enabled'] = String(m.dynamicAllocation);
  if (m.dynamicAllocation) {
    if (m.initialExecutors !== undefined) c['spark.dynamicAllocation.initialExecutors'] = String(m.initialExecutors);
    if (m.minExecutors !== undefined) c['spark.dynamicAllocation.minExecutors'] = String(m.minExecutors);
    if (m.maxExecutors !== undefined) c['spark.dynamicAllocation.maxExecutors'] = String(m.maxExecutors);
  }
  return c;
}
