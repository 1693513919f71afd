// Limits of the stream clients of one API process, shared by both transports:
//   - resumed SSE streams (Last-Event-ID) each hold a MongoDB change stream of their own, so a principal may
//     hold at most STREAM_RESUMED_PER_PRINCIPAL of them at once; the next answers 429;
//   - a client that does not read (SSE or Socket.IO) would make the process buffer its events without end,
//     so once more than STREAM_MAX_BUFFERED_BYTES wait unsent for it, it is disconnected.
// Both are counted on the API's /metrics.
import { Counter, type Registry } from 'prom-client';
import type { Socket } from 'socket.io';
import type { Config } from '../../lib/config';
import { logger } from '../../lib/log';

const log = logger('streams');

export type StreamLimitsConfig = Pick<Config, 'STREAM_RESUMED_PER_PRINCIPAL' | 'STREAM_MAX_BUFFERED_BYTES'>;

export const DEFAULT_STREAM_LIMITS: StreamLimitsConfig = {
  STREAM_RESUMED_PER_PRINCIPAL: 8,
  STREAM_MAX_BUFFERED_BYTES: 1_048_576,
};

/** A client error of the stream endpoints, answered by the error middleware with its status. */
const tooMany = (message: string) => Object.assign(new Error(message), { status: 429, expose: true });

/** How often a dropped client is logged at most (the counter has every one). */
const LOG_EVERY_MS = 60_000;

export class StreamLimits {
  readonly maxResumed: number;
  readonly maxBuffered: number;
  private readonly resumed = new Map<string, number>();
  private readonly registries = new Set<Registry>();
  private lastLog = 0;
  private unlogged = 0;
  readonly droppedClients = new Counter({
    name: 'spark_stream_clients_dropped_total',
    help: 'Stream clients disconnected for not reading (more than STREAM_MAX_BUFFERED_BYTES unsent), by transport',
    labelNames: ['transport'],
    registers: [],
  });
  readonly refusedResumes = new Counter({
    name: 'spark_stream_resumes_refused_total',
    help: 'Resumed SSE streams refused with 429 (the principal held STREAM_RESUMED_PER_PRINCIPAL already)',
    registers: [],
  });

  constructor(config: StreamLimitsConfig = DEFAULT_STREAM_LIMITS) {
    this.maxResumed = config.STREAM_RESUMED_PER_PRINCIPAL;
    this.maxBuffered = config.STREAM_MAX_BUFFERED_BYTES;
  }

  /** Exposes the counters on a /metrics registry (once per registry). */
  register(registry: Registry): void {
    if (this.registries.has(registry)) return;
    this.registries.add(registry);
    registry.registerMetric(this.droppedClients);
    registry.registerMetric(this.refusedResumes);
  }

  /** Resumed streams the principal holds now. */
  resumedBy(principal: string): number {
    return this.resumed.get(principal) ?? 0;
  }

  /** Takes one resumed stream for the principal, or throws 429; the returned function gives it back (once). */
  acquireResumed(principal: string): () => void {
    const held = this.resumedBy(principal);
    if (held >= this.maxResumed) {
      this.refusedResumes.inc();
      throw tooMany(
        `too many resumed streams: ${principal} has ${held} open (Last-Event-ID), the most one caller may hold; ` +
          'close one, or reconnect without Last-Event-ID and read the current state with a GET',
      );
    }
    this.resumed.set(principal, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const n = this.resumedBy(principal) - 1;
      if (n > 0) this.resumed.set(principal, n);
      else this.resumed.delete(principal);
    };
  }

  /** True when a client has more bytes waiting than it may. */
  overBuffered(bytes: number): boolean {
    return bytes > this.maxBuffered;
  }

  /** Counts (and now and then logs) a client disconnected for not reading. */
  dropped(transport: 'sse' | 'socketio', what: Record<string, unknown>): void {
    this.droppedClients.inc({ transport });
    this.unlogged++;
    const now = Date.now();
    if (now - this.lastLog < LOG_EVERY_MS) return;
    log.warn('stream client disconnected: it did not read its events', {
      transport,
      ...what,
      maxBufferedBytes: this.maxBuffered,
      droppedSinceLastLog: this.unlogged,
    });
    this.lastLog = now;
    this.unlogged = 0;
  }
}

interface EngineInternals {
  /** Packets engine.io holds until the transport can take them (a poll, or the previous WebSocket write done). */
  writeBuffer?: { data?: unknown }[];
  transport?: { socket?: { bufferedAmount?: number; terminate?: () => void } };
}

const packetBytes = (p: { data?: unknown }) =>
  typeof p.data === 'string' ? p.data.length : Buffer.isBuffer(p.data) ? p.data.length : 0;

/** Bytes waiting to reach a Socket.IO client: engine.io's queue and, on WebSocket, the socket's own buffer. */
export function socketBacklog(socket: Socket): number {
  const conn = socket.conn as unknown as EngineInternals;
  let n = conn.transport?.socket?.bufferedAmount ?? 0;
  for (const p of conn.writeBuffer ?? []) n += packetBytes(p);
  return n;
}

/** Disconnects a Socket.IO client at once, dropping what it has not read (a polite close would wait for it). */
export function dropSocket(socket: Socket): void {
  const conn = socket.conn as unknown as EngineInternals & { close(discard?: boolean): void };
  conn.transport?.socket?.terminate?.();
  conn.close(true);
  socket.disconnect(true);
}
