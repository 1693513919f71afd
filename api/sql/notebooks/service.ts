// SQL notebooks (4.30–4.32): plain documents owned by the API, each an ordered list of cells whose ids are
// unique within the notebook (a client addresses cells by id). Names need not be unique.
import { randomUUID } from 'node:crypto';
import type { SqlNotebook, SqlNotebookData } from '../../../domain/sql';
import { Collections } from '../../../lib/mongo';
import type { ApiDeps } from '../../deps';
import { conflict, findOr404, notFound } from '../../errors';
import { findPage, parseListQuery, resourceOf, searchFilter, type Page, type Query } from '../../list';

type NotebookDoc = SqlNotebook & { _id: string; createdTime: number; updatedTime: number };

const TIMES = ['createdTime', 'updatedTime'];
const SORTABLE = ['name', 'id', ...TIMES];

const notebooksOf = ({ store }: Pick<ApiDeps, 'store'>) => store.col<NotebookDoc>(Collections.notebooks);
const toNotebook = (d: NotebookDoc): SqlNotebook => resourceOf<SqlNotebook>(d, TIMES);
const missing = (id: string) => `notebook '${id}' does not exist`;

/** Two cells of one id would make the notebook ambiguous to edit: refused like any invalid field. */
function checkCellIds(body: SqlNotebookData): void {
  const seen = new Map<string, number>();
  body.statements.forEach((cell, i) => {
    const first = seen.get(cell.id);
    if (first !== undefined)
      throw conflict(`statements.${i}.id: '${cell.id}' is already the id of statements.${first}`);
    seen.set(cell.id, i);
  });
}

export async function listNotebooks(deps: ApiDeps, query: Query): Promise<Page<SqlNotebook>> {
  const lq = parseListQuery(query, SORTABLE, deps.config.MAX_PAGE_SIZE, ['name', 1]);
  return findPage(notebooksOf(deps), searchFilter(lq.search, ['name', 'statements.code']), lq, toNotebook);
}

export async function getNotebook(deps: ApiDeps, id: string): Promise<SqlNotebook> {
  return toNotebook(await findOr404(notebooksOf(deps), { _id: id }, missing(id)));
}

export async function createNotebook(deps: ApiDeps, body: SqlNotebookData): Promise<{ id: string }> {
  checkCellIds(body);
  const id = randomUUID().replace(/-/g, '');
  const now = Date.now();
  await notebooksOf(deps).insertOne({
    name: body.name,
    statements: body.statements,
    _id: id,
    id,
    createdTime: now,
    updatedTime: now,
  });
  return { id };
}

/** Ilum's PUT carries the whole notebook: its name and cells replace the stored ones. */
export async function updateNotebook(deps: ApiDeps, id: string, body: SqlNotebookData): Promise<void> {
  checkCellIds(body);
  const set = { name: body.name, statements: body.statements, updatedTime: Date.now() };
  const r = await notebooksOf(deps).updateOne({ _id: id }, { $set: set });
  if (r.matchedCount === 0) throw notFound(missing(id));
}

export async function deleteNotebook(deps: ApiDeps, id: string): Promise<void> {
  const r = await notebooksOf(deps).deleteOne({ _id: id });
  if (r.deletedCount === 0) throw notFound(missing(id));
}
