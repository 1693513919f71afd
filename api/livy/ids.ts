// Livy's integer ids and what they stand for, in the `livyIds` collection: counters allocated atomically
// ($inc with upsert), sessions → groups, statements → executions, batches → single jobs. Deleting a
// session or batch marks its record; the group or job itself stays in the main API's history.
import type { Collection, Filter } from 'mongodb';
import { Collections, type Store } from '../../lib/mongo';
import { findOr404, notFound } from '../errors';
import type { SessionKind, StatementKind } from './shapes';

export interface SessionRecord {
  _id: string;
  type: 'session';
  id: number;
  groupId: string;
  kind: SessionKind;
  name: string;
  proxyUser: string | null;
  createdTime: number;
  deleted?: boolean;
}

export interface StatementRecord {
  _id: string;
  type: 'statement';
  sessionId: number;
  id: number;
  jobInstanceId: string;
  code: string;
  kind: StatementKind;
  cancelled?: boolean;
}

export interface BatchRecord {
  _id: string;
  type: 'batch';
  id: number;
  jobId: string;
  name: string;
  proxyUser: string | null;
  createdTime: number;
  deleted?: boolean;
}

type LivyDoc = SessionRecord | StatementRecord | BatchRecord | { _id: string; type: 'counter'; next: number };

const col = (store: Store) => store.col(Collections.livy) as unknown as Collection<LivyDoc>;

/** The next id of a counter (`session`, `batch`, `statement:<sessionId>`), from 0 as in Livy. */
export async function nextId(store: Store, counter: string): Promise<number> {
  const doc = await col(store).findOneAndUpdate(
    { _id: `counter:${counter}` },
    { $inc: { next: 1 }, $setOnInsert: { type: 'counter' } },
    { upsert: true, returnDocument: 'after' },
  );
  return (doc as { next: number }).next - 1;
}

export const sessionKey = (id: number) => `session:${id}`;
export const batchKey = (id: number) => `batch:${id}`;
export const statementKey = (sessionId: number, id: number) => `statement:${sessionId}:${id}`;

export async function insertRecord(store: Store, doc: SessionRecord | StatementRecord | BatchRecord): Promise<void> {
  await col(store).insertOne(doc);
}

/** The record of `key` unless deleted (a deleted session or batch names nothing). */
const live = (key: string): Filter<LivyDoc> => ({ _id: key, deleted: { $ne: true } }) as Filter<LivyDoc>;

/** Livy ids in paths are integers; anything else names nothing. */
const parseId = (raw: string, what: string): number => {
  if (!/^\d{1,9}$/.test(raw)) throw notFound(`${what} '${raw}' not found`);
  return Number(raw);
};

export async function findSession(store: Store, raw: string): Promise<SessionRecord> {
  const id = parseId(raw, 'Session');
  return (await findOr404(col(store), live(sessionKey(id)), `Session '${raw}' not found.`)) as SessionRecord;
}

export async function findBatch(store: Store, raw: string): Promise<BatchRecord> {
  const id = parseId(raw, 'Batch');
  return (await findOr404(col(store), live(batchKey(id)), `Batch '${raw}' not found.`)) as BatchRecord;
}

export async function findStatement(store: Store, sessionId: number, raw: string): Promise<StatementRecord> {
  const id = parseId(raw, 'Statement');
  const message = `Statement '${raw}' not found in session ${sessionId}.`;
  return (await findOr404(col(store), { _id: statementKey(sessionId, id) }, message)) as StatementRecord;
}

export async function markRecord(store: Store, key: string, fields: { deleted?: true; cancelled?: true }) {
  await col(store).updateOne({ _id: key }, { $set: fields });
}

/** A page of live sessions or batches by id, and how many there are. */
export async function listRecords<T extends SessionRecord | BatchRecord>(
  store: Store,
  type: T['type'],
  from: number,
  size: number,
): Promise<{ total: number; items: T[] }> {
  const filter = { type, deleted: { $ne: true } };
  const [total, items] = await Promise.all([
    col(store).countDocuments(filter),
    col(store).find(filter).sort({ id: 1 }).skip(from).limit(size).toArray(),
  ]);
  return { total, items: items as T[] };
}

export async function sessionStatements(store: Store, sessionId: number): Promise<StatementRecord[]> {
  const docs = await col(store).find({ type: 'statement', sessionId }).sort({ id: 1 }).toArray();
  return docs as StatementRecord[];
}
