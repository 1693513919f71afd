// The edit-group form (PUT /group/{id}, multipart): description, tags, Spark configuration, Python requirements,
// Maven packages, pause when idle, memory settings, and more code files to load. Only the fields changed are
// sent (an emptied one is sent empty, which clears it); when a Spark setting changed, the service starts new
// instances, which replace the old ones once one is READY. Scale has its own control on the page. Opened from a group's page in a dialog; the
// API's refusal shows above the form and next to the field it names.
import { put } from '../api';
import type { Group } from '../types';
import { Button } from '../ui';
import {
  CodeFilesField,
  codeFilesField,
  formBody,
  MEMORY_INITIAL,
  MemoryFieldset,
  memoryErrors,
  Refusal,
  useFiles,
  useForm,
  type Values,
} from './groups-form';
import { SparkSettingsFields } from './spark-fields';

/** The group's settings as the form's string values (the same notation the create form takes). */
export function editValuesOf(g: Group): Values {
  const mem = Object.fromEntries(
    Object.entries(g.memorySettings).map(([k, v]) => [k, k === 'dynamicAllocation' && v === false ? '' : String(v)]),
  );
  return {
    description: g.description,
    tags: g.tags,
    jobConfig: Object.entries(g.jobConfig)
      .map(([k, v]) => `${k}=${v}`)
      .join(';'),
    pyRequirements: g.pyRequirements,
    packages: g.packages,
    autoPause: String(g.autoPause),
    ...MEMORY_INITIAL,
    ...mem,
  };
}

/** The fields whose value differs from the initial one. */
export const changedValues = (initial: Values, now: Values): Values =>
  Object.fromEntries(Object.entries(now).filter(([k, x]) => x.trim() !== (initial[k] ?? '').trim()));

export function EditGroupForm({ group, onSaved }: { group: Group; onSaved: () => void }) {
  const initial = editValuesOf(group);
  const form = useForm('group-edit', initial);
  const [files, onFiles] = useFiles();
  const v = form.values;
  const fileField = codeFilesField(group.language);

  const onSubmit = async (e: Event) => {
    e.preventDefault();
    const changed = changedValues(initial, v);
    const ok = await form.submit(
      () => memoryErrors(v),
      async () => {
        if (!Object.keys(changed).length && !files[fileField]?.length) return;
        await put(`/group/${group.id}`, formBody(changed, files, Object.keys(changed)));
      },
    );
    if (ok) onSaved();
  };

  return (
    <form onSubmit={onSubmit} noValidate aria-label="Edit the group">
      <Refusal form={form} />
      <p class="muted">
        Changing Spark settings starts new instances, which replace the old ones once one is ready; running executions
        finish first.
      </p>
      <div class="form-cols">
        <SparkSettingsFields controls={form} />
        {form.select('autoPause', 'Pause when idle (autoPause)', ['false', 'true'])}
      </div>
      <CodeFilesField
        id="group-edit-files"
        language={group.language}
        label={group.language === 'SCALA' ? 'More jars' : 'More Python modules (pyFiles)'}
        hint="added to what the group loads"
        onFiles={onFiles}
      />
      {form.area('description', 'Description')}
      <MemoryFieldset form={form} />
      <div class="actions form-actions">
        <Button type="submit" variant="primary" busy={form.busy}>
          Save changes
        </Button>
      </div>
    </form>
  );
}
