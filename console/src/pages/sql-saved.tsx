// Saved statements (GET/POST/PUT/DELETE /sql/statement): the list with open (into the editor), rename and
// delete, and the small form that saves the editor's statement under a name. Names are checked by the API;
// its 409 message is shown next to the form that caused it. Writing needs the operator role.
import { useState } from 'preact/hooks';
import { del, get, post, put, type Page } from '../api';
import { useCan } from '../session';
import { act, Button, ConfirmButton, ErrorBox, Pager, useAsync } from '../ui';
import { ENGINE_LABEL, NameForm, type SqlSaved } from './sql-common';

const SIZE = 10;

/** Saves `draft` under a name; `onSaved` runs after the API accepted it. */
export function SaveStatementForm({
  draft,
  onSaved,
  onClose,
}: {
  draft: Omit<SqlSaved, 'id' | 'name'>;
  onSaved: () => void;
  onClose: () => void;
}) {
  return (
    <NameForm
      label="Name of the saved statement"
      submit="Save"
      onCancel={onClose}
      onSubmit={async (name) => {
        await post('/sql/statement', { ...draft, name });
        onSaved();
        onClose();
      }}
    />
  );
}

export function SavedPanel({ version, onOpen }: { version: number; onOpen: (s: SqlSaved) => void }) {
  const canWrite = useCan('operator');
  const [page, setPage] = useState(0);
  const [renaming, setRenaming] = useState<string>();
  const list = useAsync(
    (signal) => get<Page<SqlSaved>>('/sql/statement', { page, size: SIZE, sort: 'name,asc' }, signal),
    [page, version],
  );
  const items = list.data?.content ?? [];
  return (
    <section class="panel" aria-labelledby="sql-saved-title">
      <h2 id="sql-saved-title">Saved statements</h2>
      <ErrorBox error={list.error} />
      <ul class="sql-side-list" aria-label="Saved statements">
        {items.map((s) => (
          <li key={s.id}>
            {renaming === s.id ? (
              <NameForm
                label={`New name of ${s.name}`}
                submit="Rename"
                initial={s.name}
                onCancel={() => setRenaming(undefined)}
                onSubmit={async (name) => {
                  // PUT replaces the whole statement: every field goes back with the new name.
                  await put(`/sql/statement/${encodeURIComponent(s.id)}`, { ...s, name });
                  setRenaming(undefined);
                  list.reload();
                }}
              />
            ) : (
              <div class="sql-side-item">
                <strong>{s.name}</strong>
                <span class="muted">
                  {ENGINE_LABEL[s.engine]}
                  {s.maxRows ? ` · max ${s.maxRows} rows` : ''}
                </span>
              </div>
            )}
            <code class="sql-side-code muted" title={s.statement}>
              {s.statement}
            </code>
            <div class="actions">
              <Button aria-label={`Open ${s.name}`} onClick={() => onOpen(s)}>
                Open
              </Button>
              {canWrite && renaming !== s.id && (
                <Button aria-label={`Rename ${s.name}`} onClick={() => setRenaming(s.id)}>
                  Rename
                </Button>
              )}
              <ConfirmButton
                hidden={!canWrite}
                label="Delete"
                question={`Delete "${s.name}"?`}
                onConfirm={() =>
                  act(`Deleted "${s.name}"`, () => del(`/sql/statement/${encodeURIComponent(s.id)}`)).then(list.reload)
                }
              />
            </div>
          </li>
        ))}
      </ul>
      {items.length === 0 && (
        <p class="muted">{list.loading && !list.data ? 'Loading…' : 'No saved statements yet.'}</p>
      )}
      {list.data && (
        <Pager page={page} totalPages={list.data.totalPages} total={list.data.totalElements} onPage={setPage} />
      )}
    </section>
  );
}
