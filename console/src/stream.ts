// Live updates over the service's Socket.IO namespaces (docs/api.md, Streams): `/jobs` (event `job`, a whole
// Job each time), `/group-job-results` (event `jobInstanceResult`) and `/sql-history` (event `sqlStatement`).
// Filters are the handshake query (jobIds, groupIds, clusterNames, groupNames, tags; clusterIds, engines).
// The credential goes in the handshake's `auth`, read again at each reconnection. socket.io-client reconnects by itself; `connected` tells the
// page whether it is live, so it can say so instead of showing stale data silently.
import { io, type Socket } from 'socket.io-client';
import { useEffect, useRef, useState } from 'preact/hooks';
import { credential } from './api';

export type Namespace = '/jobs' | '/group-job-results' | '/sql-history' | '/connect-servers' | '/connect-sessions';
const EVENTS: Record<Namespace, string> = {
  '/jobs': 'job',
  '/group-job-results': 'jobInstanceResult',
  '/sql-history': 'sqlStatement',
  '/connect-servers': 'connectServer',
  '/connect-sessions': 'connectSession',
};

export type StreamQuery = Record<string, string | string[] | undefined>;

export function openStream<T>(
  namespace: Namespace,
  query: StreamQuery,
  onEvent: (item: T) => void,
  onState?: (connected: boolean) => void,
): Socket {
  const q: Record<string, string> = {};
  for (const [k, v] of Object.entries(query))
    if (v !== undefined && v.length) q[k] = Array.isArray(v) ? v.join(',') : v;
  // forceNew: the filters are the connection's query, and a shared (multiplexed) connection would keep the
  // query of whichever stream opened it first. `auth` is read at each (re)connection: a renewed token is used.
  const socket = io(namespace, {
    transports: ['websocket'],
    query: q,
    auth: (cb) => {
      const cred = credential();
      cb(cred ? { token: cred } : {});
    },
    forceNew: true,
  });
  socket.on(EVENTS[namespace], onEvent);
  socket.on('connect', () => onState?.(true));
  socket.on('disconnect', () => onState?.(false));
  socket.on('connect_error', () => onState?.(false));
  return socket;
}

/**
 * Calls `onEvent` for every event of `namespace` matching `query` while the component is mounted; returns
 * whether the stream is connected. The query is compared by value: a new object with the same filters does
 * not reconnect.
 */
export function useStream<T>(namespace: Namespace, query: StreamQuery, onEvent: (item: T) => void): boolean {
  const [connected, setConnected] = useState(false);
  const handler = useRef(onEvent);
  handler.current = onEvent;
  const key = JSON.stringify(query);
  useEffect(() => {
    const socket = openStream<T>(namespace, JSON.parse(key) as StreamQuery, (x) => handler.current(x), setConnected);
    return () => {
      socket.disconnect();
    };
  }, [namespace, key]);
  return connected;
}
