// Lists: page, size, sort, search, array filters in both forms (`a=x&a=y`, `a=x,y`), page envelope.
import type { Collection, Document, Filter, Sort } from 'mongodb';
import { z } from 'zod';
import { conflict } from './errors';

export interface ListQuery {
  page: number;
  size: number;
  sort: [string, 1 | -1][];
  sortRaw: string[];
  search?: string;
}

/** Query parameters as Koa parses them: a repeated name arrives as an array. */
export type Query = Record<string, string | string[] | undefined>;

/** `a=x&a=y` and `a=x,y` both → ['x', 'y']. */
export function arrayParam(q: Query, name: string): string[] | undefined {
  const v = q[name];
  if (v === undefined) return undefined;
  const list = (Array.isArray(v) ? v : [v])
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
  return list;
}

/** An enum array filter; unknown values are a validation failure (409). */
export function enumArrayParam<T extends string>(
  q: Query,
  name: string,
  allowed: readonly T[],
  dflt?: T[],
): T[] | undefined {
  const list = arrayParam(q, name);
  if (list === undefined || list.length === 0) return dflt;
  for (const v of list) {
    if (!allowed.includes(v as T)) throw conflict(`${name}: '${v}' is not one of ${allowed.join(', ')}`);
  }
  return list as T[];
}

const single = (q: Query, name: string): string | undefined => {
  const v = q[name];
  return Array.isArray(v) ? v[v.length - 1] : v;
};

/** A whole-number query parameter; out of range or not a number is a validation failure (409). */
export function intParam(q: Query, name: string, dflt: number, min: number, max: number): number {
  const s = single(q, name);
  if (s === undefined || s === '') return dflt;
  const r = z.coerce.number().int().min(min).max(max).safeParse(s);
  if (!r.success) throw conflict(`${name}: '${s}' must be a whole number from ${min} to ${max}`);
  return r.data;
}

export function parseListQuery(
  q: Query,
  sortable: readonly string[],
  maxSize: number,
  defaultSort: [string, 1 | -1],
  /** Other names clients use for sortable fields (Ilum 1.5.3's `name` for a job's `jobName`). */
  aliases: Record<string, string> = {},
): ListQuery {
  const page = intParam(q, 'page', 0, 0, 1_000_000);
  const size = intParam(q, 'size', 10, 1, maxSize);
  const sortRaw = (Array.isArray(q.sort) ? q.sort : q.sort ? [q.sort] : []).filter(Boolean);
  // `sort=name,asc` or `sort=name` (asc); several sort params order by each in turn.
  const sort: [string, 1 | -1][] = sortRaw.map((s) => {
    const [given, dir = 'asc', ...rest] = s.split(',').map((p) => p.trim());
    const field = aliases[given] ?? given;
    if (rest.length || !sortable.includes(field)) {
      throw conflict(`sort: '${s}' must be field,asc|desc with field one of ${sortable.join(', ')}`);
    }
    if (dir.toLowerCase() !== 'asc' && dir.toLowerCase() !== 'desc')
      throw conflict(`sort: direction of '${s}' must be asc or desc`);
    return [field, dir.toLowerCase() === 'asc' ? 1 : -1];
  });
  if (sort.length === 0) sort.push(defaultSort);
  const search = single(q, 'search')?.trim() || undefined;
  return { page, size, sort, sortRaw: sort.map(([f, d]) => `${f},${d === 1 ? 'asc' : 'desc'}`), search };
}

/** Read-model fields that are not part of any resource. */
const INTERNAL = ['_id', 'version', 'tagMap', 'groupName'];
/** A read-model document without its internal fields (and any extra keys given). */
export function resourceOf<T>(d: Document, extra: string[] = []): T {
  const out: Document = {};
  for (const [k, v] of Object.entries(d)) if (!INTERNAL.includes(k) && !extra.includes(k)) out[k] = v;
  return out as T;
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The `search` word filter over the given text fields. */
export function searchFilter(search: string | undefined, fields: string[]): Document {
  if (!search) return {};
  const rx = { $regex: escapeRegex(search), $options: 'i' };
  return { $or: fields.map((f) => ({ [f]: rx })) };
}

/** `tags=k=v;k2=v2` filter: every given tag must be present with that value. */
export function tagsFilter(tags: Record<string, string>): Document {
  return Object.keys(tags).length ? { $and: Object.entries(tags).map(([k, v]) => ({ [`tagMap.${k}`]: v })) } : {};
}

export interface Page<T> {
  page: { number: number; size: number; offset: number; paged: boolean };
  sort: string[];
  totalElements: number;
  totalPages: number;
  first: boolean;
  last: boolean;
  empty: boolean;
  content: T[];
}

export async function findPage<D extends Document, T>(
  col: Collection<D>,
  filter: Filter<D>,
  lq: ListQuery,
  toResource: (d: D) => T | Promise<T>,
): Promise<Page<T>> {
  const sort: Sort = Object.fromEntries([...lq.sort, ['_id', 1]]);
  const [docs, total] = await Promise.all([
    col
      .find(filter)
      .sort(sort)
      .skip(lq.page * lq.size)
      .limit(lq.size)
      .toArray(),
    col.countDocuments(filter),
  ]);
  const content = await Promise.all(docs.map((d) => toResource(d as D)));
  const totalPages = Math.ceil(total / lq.size);
  return {
    page: { number: lq.page, size: lq.size, offset: lq.page * lq.size, paged: true },
    sort: lq.sortRaw,
    totalElements: total,
    totalPages,
    first: lq.page === 0,
    last: lq.page >= totalPages - 1,
    empty: content.length === 0,
    content,
  };
}
