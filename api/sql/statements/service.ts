// Saved SQL statements (4.27–4.29): plain documents owned by the API. Names need not be unique (as in
// Ilum); the stored document is the resource plus its creation and update times, used for sorting.
import { randomUUID } from 'node:crypto';
import type { SqlSaved, SqlSavedData } from '../../../domain/sql';
import { Collections } from '../../../lib/mongo';
import type { ApiDeps } from '../../deps';
import { findOr404, notFound } from '../../errors';
import { findPage, parseListQuery, resourceOf, searchFilter, type Page, type Query } from '../../list';

type SavedDoc = SqlSaved & { _id: string; createdTime: number; updatedTime: number };

const TIMES = ['createdTime', 'updatedTime'];
const SORTABLE = ['name', 'engine', 'id', ...TIMES];

const savedOf = ({ store }: Pick<ApiDeps, 'store'>) => store.col<SavedDoc>(Collections.sqlSaved);
const toSaved = (d: SavedDoc): SqlSaved => resourceOf<SqlSaved>(d, TIMES);
const missing = (id: string) => `saved statement '${id}' does not exist`;
/** Drops the undefined optional fields (maxRows), which the driver would otherwise store as null. */
const plain = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

export async function listSavedStatements(deps: ApiDeps, query: Query): Promise<Page<SqlSaved>> {
  const lq = parseListQuery(query, SORTABLE, deps.config.MAX_PAGE_SIZE, ['name', 1]);
  return findPage(savedOf(deps), searchFilter(lq.search, ['name', 'statement']), lq, toSaved);
}

export async function getSavedStatement(deps: ApiDeps, id: string): Promise<SqlSaved> {
  return toSaved(await findOr404(savedOf(deps), { _id: id }, missing(id)));
}

export async function createSavedStatement(deps: ApiDeps, body: SqlSavedData): Promise<{ id: string }> {
  const id = randomUUID().replace(/-/g, '');
  const now = Date.now();
  await savedOf(deps).insertOne(plain({ ...body, _id: id, id, createdTime: now, updatedTime: now }));
  return { id };
}

/** Ilum's PUT carries the whole statement: the body replaces the stored data (an omitted maxRows is cleared). */
export async function updateSavedStatement(deps: ApiDeps, id: string, body: SqlSavedData): Promise<void> {
  const unset = body.maxRows === undefined ? { $unset: { maxRows: '' as const } } : {};
  const r = await savedOf(deps).updateOne({ _id: id }, { $set: { ...plain(body), updatedTime: Date.now() }, ...unset });
  if (r.matchedCount === 0) throw notFound(missing(id));
}

export async function deleteSavedStatement(deps: ApiDeps, id: string): Promise<void> {
  const r = await savedOf(deps).deleteOne({ _id: id });
  if (r.deletedCount === 0) throw notFound(missing(id));
}
