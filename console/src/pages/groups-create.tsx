// The create-group form (POST /group, multipart): name, kind, language, cluster, scale, the code to load
// (pyFiles for PYTHON, jars for SCALA), Spark settings and memory settings. Checked as the API checks them;
// the API's refusal shows next to its field. Opened from the groups list in a dialog.
import { get, post } from '../api';
import { GROUP_KINDS, LANGUAGES } from '../types';
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
} from './groups-form';
import { SparkSettingsFields } from './spark-fields';

const INITIAL = {
  name: '',
  description: '',
  kind: 'JOB',
  language: 'PYTHON',
  clusterName: 'default',
  scale: '1',
  autoPause: 'false',
  jobConfig: '',
  tags: '',
  pyRequirements: '',
  packages: '',
  ...MEMORY_INITIAL,
};

export function CreateGroupForm({ onCreated }: { onCreated: (groupId: string) => void }) {
  const form = useForm('group-new', INITIAL);
  const [files, onFiles] = useFiles();
  const clusters = useAsync((signal) => get<{ names: string[] }>('/cluster/names', undefined, signal), []);
  const names = clusters.data?.names ?? [form.values.clusterName];
  const v = form.values;

  const onSubmit = async (e: Event) => {
    e.preventDefault();
    let groupId = '';
    const ok = await form.submit(
      () => ({ name: nameError(v.name), scale: wholeError(v.scale, 0), ...memoryErrors(v) }),
      async () => {
        groupId = (await post<{ groupId: string }>('/group', formBody(v, files))).groupId;
      },
    );
    if (ok) onCreated(groupId);
  };

  return (
    <form onSubmit={onSubmit} noValidate aria-label="Create a group">
      <Refusal form={form} />
      <div class="form-cols">
        {form.input('name', 'Name', 'unique; letters, digits, space, . _ -', { required: true, maxLength: 128 })}
        {form.select('kind', 'Kind', GROUP_KINDS, 'JOB: job classes; CODE: code and job classes')}
        {form.select('language', 'Language', LANGUAGES)}
        {form.select('clusterName', 'Cluster', names)}
        {form.input('scale', 'Scale', 'number of warm drivers', { inputMode: 'numeric' })}
        {form.select('autoPause', 'Pause when idle (autoPause)', ['false', 'true'])}
      </div>
      <CodeFilesField
        id="group-new-files"
        language={v.language}
        label={v.language === 'SCALA' ? 'Jars with the job classes' : 'Python modules (pyFiles)'}
        hint={v.language === 'SCALA' ? 'classes implementing cloud.ilum.job.Job' : 'job classes are named module.Class'}
        onFiles={onFiles}
      />
      <div class="form-cols">
        <SparkSettingsFields controls={form} />
      </div>
      {form.area('description', 'Description')}
      <MemoryFieldset form={form} />
      <div class="actions form-actions">
        <Button type="submit" variant="primary" busy={form.busy}>
          Create group
        </Button>
      </div>
    </form>
  );
}
