// The SQL workspace (`#/sql`): an editor that runs one statement on a cluster's engine (Ctrl/Cmd+Enter) and
// shows its typed result, the query history (live), the engines of the chosen cluster, saved statements and
// notebooks. The notebook page is in sql-notebook.tsx. Running and every write need the operator role.
import { useRef, useState } from 'preact/hooks';
import type { PageProps } from '../router';
import { useCan } from '../session';
import { Button, ErrorBox, Field, Loading, PageHeader } from '../ui';
import {
  DEFAULT_SETTINGS,
  isRunKey,
  RunSettingsFields,
  useClusters,
  useRunner,
  useStored,
  type Engine,
  type RunSettings,
} from './sql-common';
import { EnginesPanel } from './sql-engines';
import { HistoryPanel } from './sql-history';
import { NotebooksPanel } from './sql-notebooks';
import { ResultView } from './sql-result';
import { SavedPanel, SaveStatementForm } from './sql-saved';
import './sql.css';

export { NotebookPage } from './sql-notebook';

interface Draft extends RunSettings {
  statement: string;
}

export function SqlPage(_: PageProps) {
  const canRun = useCan('operator');
  const clusters = useClusters();
  const [draft, setDraft] = useStored<Draft>('sql-draft', { ...DEFAULT_SETTINGS, statement: '' });
  const runner = useRunner();
  const [saving, setSaving] = useState(false);
  const [savedVersion, setSavedVersion] = useState(0);
  const editor = useRef<HTMLTextAreaElement>(null);

  const run = () => {
    if (canRun && draft.statement.trim() && !runner.running) runner.run(draft.statement, draft);
  };
  const load = (statement: string, engine: Engine, more: Partial<Draft> = {}) => {
    setDraft({ ...draft, ...more, statement, engine });
    editor.current?.focus();
    editor.current?.scrollIntoView({ block: 'center' });
  };
  const clusterName = clusters.data?.find((c) => c.id === draft.clusterId)?.name ?? draft.clusterId;

  return (
    <>
      <PageHeader title="SQL" />
      <div class="sql-layout">
        <div class="sql-main">
          <section class="panel" aria-labelledby="sql-editor-title">
            <h2 id="sql-editor-title" class="sr-only">
              Editor
            </h2>
            <ErrorBox error={clusters.error} />
            <RunSettingsFields value={draft} onChange={(s) => setDraft({ ...draft, ...s })} clusters={clusters.data} />
            <Field label="SQL statement" hint="Ctrl+Enter (⌘+Enter on a Mac) runs it">
              <textarea
                ref={editor}
                class="code sql-editor"
                spellcheck={false}
                value={draft.statement}
                onInput={(e) => setDraft({ ...draft, statement: e.currentTarget.value })}
                onKeyDown={(e) => {
                  if (isRunKey(e)) {
                    e.preventDefault();
                    run();
                  }
                }}
              />
            </Field>
            <div class="actions">
              {canRun &&
                (runner.running ? (
                  <Button variant="danger" onClick={runner.cancel}>
                    Cancel
                  </Button>
                ) : (
                  <Button variant="primary" disabled={!draft.statement.trim()} onClick={run}>
                    Run
                  </Button>
                ))}
              {canRun && !saving && (
                <Button disabled={!draft.statement.trim()} onClick={() => setSaving(true)}>
                  Save as…
                </Button>
              )}
              {!canRun && <span class="muted">Running and saving statements needs the operator role.</span>}
            </div>
            {saving && (
              <SaveStatementForm
                draft={{
                  statement: draft.statement,
                  engine: draft.engine,
                  maxRows: Number(draft.maxRows) >= 1 ? Number(draft.maxRows) : undefined,
                }}
                onSaved={() => setSavedVersion((v) => v + 1)}
                onClose={() => setSaving(false)}
              />
            )}
          </section>
          <section class="sql-output" aria-label="Result" aria-busy={runner.running}>
            {runner.running && <Loading what="Running (a first statement also starts the engine)" />}
            {!runner.running && <ErrorBox error={runner.error} />}
            {!runner.running && runner.result && <ResultView result={runner.result} maxRows={runner.maxRows} />}
            {!runner.running && !runner.error && !runner.result && (
              <p class="muted">The result of the statement shows here.</p>
            )}
          </section>
          <HistoryPanel onOpen={(e) => load(e.statement, e.engine, { clusterId: e.clusterId })} />
        </div>
        <aside class="sql-side" aria-label="Engines, saved statements and notebooks">
          <EnginesPanel clusterId={draft.clusterId} clusterName={clusterName} />
          <SavedPanel
            version={savedVersion}
            onOpen={(s) => load(s.statement, s.engine, s.maxRows ? { maxRows: String(s.maxRows) } : {})}
          />
          <NotebooksPanel />
        </aside>
      </div>
    </>
  );
}
