// The Spark settings every job-like form asks for (submit a job, create or edit a group, a schedule), with one
// label and hint each: Spark configuration, tags, Python requirements, Maven packages, and the memory settings,
// whose fields are domain/memory.ts's. A form passes the controls it renders fields with. The cluster form
// asks for memory defaults its own way (pages/clusters-form.tsx).
import { Fragment, type JSX } from 'preact';
import { MEMORY_FIELDS } from '../types';

export type MemoryField = (typeof MEMORY_FIELDS)[number];

/** How a form renders a control for field `k`; `select` options '' reads "not set". */
export interface FieldControls {
  input(k: string, label: string, hint?: string): JSX.Element;
  area(k: string, label: string, hint?: string): JSX.Element;
  select(k: string, label: string, options: string[], hint?: string): JSX.Element;
}

export const MEMORY_HINTS: Record<MemoryField, string> = {
  executors: 'whole number',
  driverCores: 'at least 1',
  executorCores: 'at least 1',
  driverMemory: 'e.g. 512m, 2g',
  executorMemory: 'e.g. 1g',
  dynamicAllocation: 'not set: false',
  initialExecutors: 'whole number',
  minExecutors: 'whole number',
  maxExecutors: 'whole number',
};

/** Spark configuration, tags, Python requirements and Maven packages, as the API's fields are named. */
export function SparkSettingsFields({ controls }: { controls: FieldControls }) {
  return (
    <>
      {controls.area('jobConfig', 'Spark configuration', 'key=value;key2=value2')}
      {controls.input('tags', 'Tags', 'key=value;key2=value2')}
      {controls.input('pyRequirements', 'Python requirements', 'pip requirements, separated by ;')}
      {controls.input('packages', 'Maven packages', 'group:artifact:version, separated by ,')}
    </>
  );
}

/** The memory settings, each named as the API names it. */
export function MemoryFields({ controls }: { controls: FieldControls }) {
  return (
    <>
      {MEMORY_FIELDS.map((k) => (
        <Fragment key={k}>
          {k === 'dynamicAllocation'
            ? controls.select(k, k, ['', 'true', 'false'], MEMORY_HINTS[k])
            : controls.input(k, k, MEMORY_HINTS[k])}
        </Fragment>
      ))}
    </>
  );
}
