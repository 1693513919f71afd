// The body of POST /sql/execute, written as the engine's rows arrive. Each batch is serialised once, when it
// comes, to UTF-8 bytes, in pieces of up to 1,000 rows (each written before the next is serialised). A result
// whose rows stay under STREAM_AFTER_BYTES is answered in one piece (with Content-Length; the bytes
// JSON.stringify of the whole result gives); a larger one goes out chunked while the engine is still being
// read, with back-pressure: the engine is asked for no batch beyond the next until the client has taken the
// last one.
//
// Same object either way, keys in the order of SqlStatementResult (info, columns, rows, logs), except that a
// streamed Trino result sends `info` after `rows`: Trino ends a query only after its last page (the Thrift
// Server ends a statement before its rows are fetched, so there `info` comes first as always).
// A streamed result that cannot end FINISHED (engine error, deadline, broken session, client gone) has its
// connection cut before the chunked body's end: a client sees a broken transfer, never a short result that
// parses.
//
// A client that asks for `application/x-ndjson` gets the same result as lines it can parse as they arrive:
// `{"columns":[…]}`, then `{"rows":[…]}` lines of up to 1,000 rows, then `{"info":{…},"logs":[…]}` last.
// Without that last line the result is incomplete.
import type { ServerResponse } from 'node:http';
import type { SqlColumn, SqlOperationInfo, SqlStatementResult } from '../../../domain/sql';
import type { JsonRows, RowSink } from '../../../lib/sql/types';

/** A result whose serialised rows stay below this is answered in one piece. */
export const STREAM_AFTER_BYTES = 64 * 1024;

/** Rows serialised and written at a time. */
const PIECE_ROWS = 1_000;

/** The media types of the answer: one JSON object (Ilum's), or its parts as JSON lines. */
export type ResultType = 'application/json' | 'application/x-ndjson';

const COMMA = 0x2c;

export class ResultBody implements RowSink {
  private columns: SqlColumn[] = [];
  private ended?: SqlOperationInfo;
  /** Serialised rows not yet written (before the body started), each batch's after a comma but the first. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private infoSent = false;
  private done = false;
  /** While the socket is full: resolved at its drain (or close). */
  private drained?: Promise<void>;
  /** Rows taken from the engine. */
  count = 0;
  /** True once the body has started: the status and headers are out, an error can no longer be answered. */
  streaming = false;

  constructor(
    private readonly res: ServerResponse,
    /** Called once, just before the first byte goes out; sets the status and headers. */
    private readonly onStart: () => void,
    /** The creation time the answer carries (the one of the whole request, not the engine's). */
    readonly creationTime: number,
    readonly type: ResultType = 'application/json',
  ) {}

  private get lines(): boolean {
    return this.type === 'application/x-ndjson';
  }

  begin(columns: SqlColumn[], ended?: SqlOperationInfo): void {
    this.columns = columns;
    this.ended = ended;
  }

  rows(batch: unknown[][]): void | Promise<void> {
    if (this.done || !batch.length) return;
    // In pieces: each goes out while the next is serialised, and a JSON-lines client parses it meanwhile.
    let wait: void | Promise<void> = undefined;
    for (let i = 0; i < batch.length; i += PIECE_ROWS) {
      const piece = batch.length <= PIECE_ROWS ? batch : batch.slice(i, i + PIECE_ROWS);
      wait = this.put(this.lines ? this.line(piece) : this.elements(piece), piece.length) ?? wait;
    }
    return wait;
  }

  /** The same, from rows the protocol serialised itself (lib/sql/hive-json.ts, trino-json.ts). */
  jsonRows(batch: JsonRows): void | Promise<void> {
    if (this.done || !batch.count) return;
    let wait: void | Promise<void> = undefined;
    for (let i = 0; i < batch.count; i += PIECE_ROWS) {
      const to = Math.min(i + PIECE_ROWS, batch.count);
      const piece = this.lines
        ? batch.encode(i, to, '{"rows":[', ']}\n')
        : batch.encode(i, to, this.count === 0 ? '' : ',', '');
      wait = this.put(piece, to - i) ?? wait;
    }
    return wait;
  }

  /** Sends (or keeps, before the body starts) the serialised `n` rows `chunk`. */
  private put(chunk: Buffer, n: number): void | Promise<void> {
    this.count += n;
    if (this.streaming) return this.write(chunk);
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    if (this.pendingBytes < STREAM_AFTER_BYTES) return;
    this.start();
    const rows = this.pending;
    this.pending = [];
    return this.write(Buffer.concat(rows));
  }

  /** `[r1,r2,…]` → `r1,r2,…` for the first batch, `,r1,r2,…` for the next ones: no copy, no join. */
  private elements(batch: unknown[][]): Buffer {
    const json = Buffer.from(JSON.stringify(batch));
    json[0] = COMMA;
    return json.subarray(this.count === 0 ? 1 : 0, json.length - 1);
  }

  /** `{"rows":[r1,r2,…]}` and a newline. */
  private line(batch: unknown[][]): Buffer {
    return Buffer.from(`{"rows":${JSON.stringify(batch)}}\n`);
  }

  /**
   * The statement runs again on another session (its engine restarted) and sends its rows again: false when
   * some were already sent, so it must not.
   */
  restart(): boolean {
    if (this.streaming) return false;
    this.pending = [];
    this.pendingBytes = 0;
    this.count = 0;
    this.columns = [];
    this.ended = undefined;
    return true;
  }

  /**
   * The whole answer of a result that never started streaming: JSON.stringify(result), byte for byte, with
   * the rows serialised as they came (none unless FINISHED, as before).
   */
  whole(result: Omit<SqlStatementResult, 'rows'>): Buffer {
    this.done = true;
    const rows = result.info.state === 'FINISHED' ? this.pending : [];
    this.pending = [];
    if (this.lines)
      return Buffer.concat([
        Buffer.from(`{"columns":${JSON.stringify(result.columns)}}\n`),
        ...rows,
        Buffer.from(`{"info":${JSON.stringify(result.info)},"logs":${JSON.stringify(result.logs)}}\n`),
      ]);
    return Buffer.concat([
      Buffer.from(`{"info":${JSON.stringify(result.info)},"columns":${JSON.stringify(result.columns)},"rows":[`),
      ...rows,
      Buffer.from(`],"logs":${JSON.stringify(result.logs)}}`),
    ]);
  }

  /** Ends a streamed body of a FINISHED statement. */
  async finish(info: SqlOperationInfo, logs: string[]): Promise<void> {
    this.done = true;
    const tail = this.lines
      ? `{"info":${JSON.stringify(info)},"logs":${JSON.stringify(logs)}}\n`
      : `]${this.infoSent ? '' : `,"info":${JSON.stringify(info)}`},"logs":${JSON.stringify(logs)}}`;
    await this.write(Buffer.from(tail));
    this.res.end();
  }

  /** Cuts a streamed body: the chunked transfer never ends, the client sees the answer is broken. */
  fail(): void {
    this.done = true;
    this.res.destroy();
  }

  private start(): void {
    this.streaming = true;
    this.onStart();
    if (this.lines) return void this.write(Buffer.from(`{"columns":${JSON.stringify(this.columns)}}\n`));
    let head = '{';
    if (this.ended) {
      head += `"info":${JSON.stringify({ ...this.ended, creationTime: this.creationTime })},`;
      this.infoSent = true;
    }
    head += `"columns":${JSON.stringify(this.columns)},"rows":[`;
    void this.write(Buffer.from(head));
  }

  /** Writes; resolves once the socket can take more, or is gone (the statement is then being stopped). */
  private write(bytes: Buffer): void | Promise<void> {
    const res = this.res;
    if (res.destroyed || (res.write(bytes) && !this.drained)) return;
    // One wait for every write made while the socket is full.
    return (this.drained ??= new Promise<void>((resolve) => {
      const go = () => {
        res.off('drain', go);
        res.off('close', go);
        this.drained = undefined;
        resolve();
      };
      res.on('drain', go);
      res.on('close', go);
    }));
  }
}
