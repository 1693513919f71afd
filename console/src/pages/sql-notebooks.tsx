// The notebook list of the SQL workspace (GET /sql/notebooks): create one (POST, then open it), open, rename
// (PUT with its cells unchanged) and delete. The notebook itself is edited on its own page (sql-notebook.tsx).
import { useState } from 'preact/hooks';
import { del, get, post, put, type Page } from '../api';
import { navigate } from '../router';
import { useCan } from '../session';
import { act, Button, ConfirmButton, ErrorBox, Pager, useAsync } from '../ui';
import { NameForm, type SqlNotebook } from './sql-common';

const SIZE = 10;

export const notebookPath = (id: string) => `/sql/notebooks/${encodeURIComponent(id)}`;

export function NotebooksPanel() {
  const canWrite = useCan('operator');
  const [page, setPage] = useState(0);
  const [creating, setCreating] = useState(false);
  const [renaming, setRenaming] = useState<string>();
  const list = useAsync(
    (signal) => get<Page<SqlNotebook>>('/sql/notebooks', { page, size: SIZE, sort: 'name,asc' }, signal),
    [page],
  );
  const items = list.data?.content ?? [];
  return (
    <section class="panel" aria-labelledby="sql-notebooks-title">
      <header class="sql-panel-header">
        <h2 id="sql-notebooks-title">Notebooks</h2>
        {canWrite && !creating && (
          <Button variant="primary" onClick={() => setCreating(true)}>
            New notebook
          </Button>
        )}
      </header>
      {creating && (
        <NameForm
          label="Name of the new notebook"
          submit="Create"
          onCancel={() => setCreating(false)}
          onSubmit={async (name) => {
            const { id } = await post<{ id: string }>('/sql/notebooks', { name, statements: [] });
            navigate(notebookPath(id));
          }}
        />
      )}
      <ErrorBox error={list.error} />
      <ul class="sql-side-list" aria-label="Notebooks">
        {items.map((nb) => (
          <li key={nb.id}>
            {renaming === nb.id ? (
              <NameForm
                label={`New name of ${nb.name}`}
                submit="Rename"
                initial={nb.name}
                onCancel={() => setRenaming(undefined)}
                onSubmit={async (name) => {
                  await put(`/sql/notebooks/${encodeURIComponent(nb.id)}`, { name, statements: nb.statements });
                  setRenaming(undefined);
                  list.reload();
                }}
              />
            ) : (
              <div class="sql-side-item">
                <a href={`#${notebookPath(nb.id)}`}>{nb.name}</a>
                <span class="muted num">
                  {nb.statements.length} {nb.statements.length === 1 ? 'cell' : 'cells'}
                </span>
              </div>
            )}
            {canWrite && renaming !== nb.id && (
              <div class="actions">
                <Button aria-label={`Rename ${nb.name}`} onClick={() => setRenaming(nb.id)}>
                  Rename
                </Button>
                <ConfirmButton
                  label="Delete"
                  question={`Delete notebook "${nb.name}"?`}
                  onConfirm={() =>
                    act(`Deleted "${nb.name}"`, () => del(`/sql/notebooks/${encodeURIComponent(nb.id)}`)).then(
                      list.reload,
                    )
                  }
                />
              </div>
            )}
          </li>
        ))}
      </ul>
      {items.length === 0 && <p class="muted">{list.loading && !list.data ? 'Loading…' : 'No notebooks yet.'}</p>}
      {list.data && (
        <Pager page={page} totalPages={list.data.totalPages} total={list.data.totalElements} onPage={setPage} />
      )}
    </section>
  );
}
