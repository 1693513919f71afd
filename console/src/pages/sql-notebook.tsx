// One notebook (`#/sql/notebooks/:notebookId`): its name and its cells, edited locally and saved whole with PUT
// (the API's validation message shows next to Save). SQL cells run on the chosen cluster and engine and show
// their result table under them; Markdown cells show rendered (sql-markdown.tsx) with an Edit toggle; PYTHON
// and SCALA cells, which the console cannot run, are shown read-only. Cells can be added, moved and removed.
import { useEffect, useState } from 'preact/hooks';
import { del, get, put } from '../api';
import { navigate, type PageProps } from '../router';
import { useCan } from '../session';
import { act, Button, ConfirmButton, ErrorBox, errorText, Field, Loading, notify, PageHeader, useAsync } from '../ui';
import {
  DEFAULT_SETTINGS,
  isRunKey,
  RunSettingsFields,
  useClusters,
  useRunner,
  useStored,
  type RunSettings,
  type SqlNotebook,
} from './sql-common';
import { Markdown } from './sql-markdown';
import { ResultView } from './sql-result';
import './sql.css';

type Cell = SqlNotebook['statements'][number];

const EDITABLE = new Set<Cell['language']>(['SQL', 'MARKDOWN']);

const newCellId = (): string => `c-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

export function NotebookPage({ params }: PageProps) {
  const id = params.notebookId;
  const canWrite = useCan('operator');
  const clusters = useClusters();
  const [settings, setSettings] = useStored<RunSettings>('sql-notebook-settings', DEFAULT_SETTINGS);
  const nb = useAsync(
    (signal) => get<SqlNotebook>(`/sql/notebooks/${encodeURIComponent(id)}`, undefined, signal),
    [id],
  );
  const [name, setName] = useState('');
  const [cells, setCells] = useState<Cell[]>([]);
  const [fresh, setFresh] = useState<Set<string>>(new Set());
  const [dirty, setDirty] = useState(false);
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState<string>();

  useEffect(() => {
    if (!nb.data) return;
    setName(nb.data.name);
    setCells(nb.data.statements);
    setDirty(false);
  }, [nb.data]);

  useEffect(() => {
    if (!dirty) return;
    const warn = (e: BeforeUnloadEvent) => e.preventDefault();
    addEventListener('beforeunload', warn);
    return () => removeEventListener('beforeunload', warn);
  }, [dirty]);

  const change = (next: Cell[]) => {
    setCells(next);
    setDirty(true);
  };
  const add = (language: Cell['language']) => {
    const cell = { id: newCellId(), language, code: '' };
    setFresh(new Set([...fresh, cell.id]));
    change([...cells, cell]);
  };
  const move = (i: number, delta: number) => {
    const next = [...cells];
    [next[i], next[i + delta]] = [next[i + delta], next[i]];
    change(next);
  };
  const save = async () => {
    setSaving(true);
    try {
      await put(`/sql/notebooks/${encodeURIComponent(id)}`, { name, statements: cells });
      setSaveError(undefined);
      setDirty(false);
      notify('Notebook saved');
    } catch (err) {
      setSaveError(errorText(err));
    } finally {
      setSaving(false);
    }
  };

  if (!nb.data)
    return (
      <>
        <PageHeader title="Notebook" />
        {nb.error ? <ErrorBox error={nb.error} /> : <Loading what="Loading the notebook" />}
        <a href="#/sql">Back to the SQL workspace</a>
      </>
    );

  return (
    <>
      <p class="sql-crumb">
        <a href="#/sql">← SQL workspace</a>
      </p>
      <PageHeader title={name || nb.data.name}>
        {canWrite && (
          <>
            <span class="muted sql-dirty" aria-live="polite">
              {dirty ? 'unsaved changes' : 'saved'}
            </span>
            <Button variant="primary" busy={saving} onClick={() => void save()}>
              Save
            </Button>
            <ConfirmButton
              label="Delete"
              question="Delete this notebook?"
              onConfirm={async () => {
                if (await act('Notebook deleted', () => del(`/sql/notebooks/${encodeURIComponent(id)}`)))
                  navigate('/sql');
              }}
            />
          </>
        )}
      </PageHeader>
      <ErrorBox error={saveError} />
      <section class="panel" aria-label="Notebook settings">
        <Field label="Notebook name">
          <input
            value={name}
            readOnly={!canWrite}
            maxLength={255}
            onInput={(e) => {
              setName(e.currentTarget.value);
              setDirty(true);
            }}
          />
        </Field>
        <RunSettingsFields value={settings} onChange={setSettings} clusters={clusters.data} />
      </section>
      <ol class="sql-cells" aria-label="Cells">
        {cells.map((cell, i) => (
          <CellView
            key={cell.id}
            cell={cell}
            index={i}
            count={cells.length}
            settings={settings}
            canWrite={canWrite}
            startEditing={fresh.has(cell.id)}
            onChange={(c) => change(cells.map((x) => (x.id === c.id ? c : x)))}
            onMove={(d) => move(i, d)}
            onRemove={() => change(cells.filter((x) => x.id !== cell.id))}
          />
        ))}
      </ol>
      {cells.length === 0 && <p class="muted">No cells yet.</p>}
      {canWrite && (
        <div class="actions sql-add-cells">
          <Button onClick={() => add('SQL')}>Add SQL cell</Button>
          <Button onClick={() => add('MARKDOWN')}>Add Markdown cell</Button>
        </div>
      )}
    </>
  );
}

function CellView({
  cell,
  index,
  count,
  settings,
  canWrite,
  startEditing,
  onChange,
  onMove,
  onRemove,
}: {
  cell: Cell;
  index: number;
  count: number;
  settings: RunSettings;
  canWrite: boolean;
  startEditing: boolean;
  onChange: (c: Cell) => void;
  onMove: (delta: number) => void;
  onRemove: () => void;
}) {
  const runner = useRunner();
  const [editing, setEditing] = useState(startEditing || cell.code === '');
  const editable = canWrite && EDITABLE.has(cell.language);
  const label = `Cell ${index + 1} (${cell.language})`;
  const run = () => {
    if (canWrite && cell.code.trim() && !runner.running) runner.run(cell.code, settings);
  };
  const showEditor = cell.language === 'SQL' || (cell.language === 'MARKDOWN' && editing && editable);

  return (
    <li class={`sql-cell sql-cell-${cell.language.toLowerCase()}`} aria-label={label}>
      <div class="sql-cell-bar">
        <span class="badge badge-muted">{cell.language}</span>
        <div class="actions">
          {cell.language === 'SQL' &&
            canWrite &&
            (runner.running ? (
              <Button variant="danger" onClick={runner.cancel}>
                Cancel
              </Button>
            ) : (
              <Button variant="primary" aria-label={`Run cell ${index + 1}`} onClick={run}>
                Run
              </Button>
            ))}
          {cell.language === 'MARKDOWN' && editable && (
            <Button
              aria-label={`${editing ? 'Preview' : 'Edit'} cell ${index + 1}`}
              onClick={() => setEditing(!editing)}
            >
              {editing ? 'Preview' : 'Edit'}
            </Button>
          )}
          {canWrite && (
            <>
              <Button aria-label={`Move cell ${index + 1} up`} disabled={index === 0} onClick={() => onMove(-1)}>
                ↑
              </Button>
              <Button
                aria-label={`Move cell ${index + 1} down`}
                disabled={index === count - 1}
                onClick={() => onMove(1)}
              >
                ↓
              </Button>
              <Button aria-label={`Remove cell ${index + 1}`} variant="danger" onClick={onRemove}>
                Remove
              </Button>
            </>
          )}
        </div>
      </div>
      {!EDITABLE.has(cell.language) ? (
        <>
          <pre class="pre" aria-label={label}>
            {cell.code}
          </pre>
          <p class="muted">{cell.language} cells are shown read-only here.</p>
        </>
      ) : showEditor ? (
        <textarea
          class={`code sql-cell-code`}
          aria-label={label}
          spellcheck={false}
          readOnly={!editable}
          value={cell.code}
          rows={Math.min(Math.max(cell.code.split('\n').length + 1, 3), 20)}
          onInput={(e) => onChange({ ...cell, code: e.currentTarget.value })}
          onKeyDown={(e) => {
            if (cell.language === 'SQL' && isRunKey(e)) {
              e.preventDefault();
              run();
            }
          }}
        />
      ) : (
        <Markdown source={cell.code} />
      )}
      {cell.language === 'SQL' && (
        <div class="sql-cell-output" aria-busy={runner.running}>
          {runner.running && <Loading what="Running" />}
          {!runner.running && <ErrorBox error={runner.error} />}
          {!runner.running && runner.result && <ResultView result={runner.result} maxRows={runner.maxRows} />}
        </div>
      )}
    </li>
  );
}
