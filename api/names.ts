// Name reservations: a group's or schedule's name is reserved before its workflow starts, so two
// concurrent creates of one name cannot both succeed (409 for the second).
import type { Document } from 'mongodb';
import { Collections, type Store } from '../lib/mongo';
import { conflict } from './errors';

export async function reserveName(
  store: Store,
  kind: 'group' | 'schedule',
  name: string,
  ownerId: string,
): Promise<void> {
  try {
    await store.col(Collections.names).insertOne({ _id: `${kind}:${name}`, ownerId, time: Date.now() } as Document);
  } catch (e) {
    if ((e as { code?: number }).code === 11000) throw conflict(`name: a ${kind} named '${name}' already exists`);
    throw e;
  }
}

export async function releaseName(
  store: Store,
  kind: 'group' | 'schedule',
  name: string,
  ownerId: string,
): Promise<void> {
  await store.col(Collections.names).deleteOne({ _id: `${kind}:${name}`, ownerId } as Document);
}

/** Moves a reservation to a new name (schedule rename); 409 when the new name is taken. */
export async function renameReservation(
  store: Store,
  kind: 'group' | 'schedule',
  from: string,
  to: string,
  ownerId: string,
): Promise<void> {
  if (from === to) return;
  await reserveName(store, kind, to, ownerId);
  await releaseName(store, kind, from, ownerId);
}
