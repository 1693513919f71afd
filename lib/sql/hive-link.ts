// The Thrift link to HiveServer2 (hive.ts): a TCP connection with SASL PLAIN and a framed transport, its RPCs
// as promises that all fail at once when the connection goes.
import type { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import path from 'node:path';
import { auth, connections, HiveClient, thrift } from 'hive-driver';
import type { EngineEndpoint } from '../../domain/sql-engine';
import { readFetchResults } from './hive-json';

const { TCLIService, TCLIService_types: T } = thrift;

class TransportError extends Error {}

// hive-driver's own thrift (its dependency, not ours): the framed transport is extended below.
const requireHere = createRequire(import.meta.url);
const thriftIndex = requireHere.resolve('thrift', { paths: [requireHere.resolve('hive-driver')] });
const thriftLib = requireHere(thriftIndex) as {
  TFramedTransport: new (
    buf?: Buffer,
    onFlush?: (frame: Buffer, seqid: number | null) => void,
  ) => { readPos: number; inBuf: Buffer };
};
const InputBufferUnderrunError = requireHere(
  path.join(path.dirname(thriftIndex), 'input_buffer_underrun_error.js'),
) as {
  new (message?: string): Error;
};

/**
 * Thrown at the end of every frame, as thrift's own: its connection reads a frame's messages until a read runs
 * past the end (catching the error by its class). Thrift builds a new error, stack trace and all, each time:
 * 7 % of the API's CPU at 8 concurrent statements (each of their RPCs is a frame). One instance, no trace.
 */
const END_OF_FRAME = new InputBufferUnderrunError('end of the frame');

/** One received frame: thrift's framed transport, but ending with END_OF_FRAME. */
class Frame extends thriftLib.TFramedTransport {
  ensureAvailable(len: number): void {
    if (this.readPos + len > this.inBuf.length) throw END_OF_FRAME;
  }
}

/**
 * Thrift's framed transport, assembling received frames as Buffers: thrift 0.20's own receiver copies every
 * byte through a JS array, which costs large results about half their speed. A frame's pieces are joined
 * once, when it is whole (joining at every piece copies a frame of n pieces n times).
 */
export class FramedTransport extends thriftLib.TFramedTransport {
  static receiver(callback: (t: object, seqid?: number) => void, seqid?: number) {
    let pieces: Buffer[] = [];
    let have = 0;
    /** Size of the frame being received, its 4-byte header included; 0 while the header is incomplete. */
    let need = 0;
    return (data: Buffer) => {
      pieces.push(data);
      have += data.length;
      for (;;) {
        if (!need) {
          if (have < 4) return;
          if (pieces[0].length < 4) pieces = [Buffer.concat(pieces, have)];
          need = 4 + pieces[0].readInt32BE(0);
        }
        if (have < need) return;
        const buf = pieces.length === 1 ? pieces[0] : Buffer.concat(pieces, have);
        callback(new Frame(buf.subarray(4, need)), seqid);
        // A copy: the start of the next frame (at most one read) must not keep this frame's memory.
        const rest = buf.subarray(need);
        pieces = rest.length ? [Buffer.from(rest)] : [];
        have = rest.length;
        need = 0;
      }
    };
  }
}

type Callback = (err: unknown, res: unknown) => void;
type Receive = (
  this: GeneratedClient,
  input: Parameters<typeof readFetchResults>[0],
  mtype: number,
  rseqid: number,
) => void;
/** The generated TCLIService client, as far as the in-place FetchResults reader needs it. */
interface GeneratedClient {
  _seqid: number;
  _reqs: Record<number, Callback>;
  recv_FetchResults: Receive;
}
const EXCEPTION = 3; // Thrift.MessageType

/** The part of the connection's socket that Link uses to send calls made together in one write. */
interface Corkable {
  cork(): void;
  uncork(): void;
}

/** A connection's RPCs as promises; all pending ones fail at once when the socket goes. */
export class Link {
  private readonly pending = new Set<(e: Error) => void>();
  private corked = false;
  /** FetchResults calls whose answers are read in place (hive-json.ts), by seqid. */
  private readonly inPlace = new Set<number>();
  broken?: TransportError;

  constructor(
    private readonly client: HiveClient,
    private readonly rpc: Record<string, (req: unknown, cb: Callback) => void>,
    private readonly socket?: Corkable,
  ) {
    const events = client as EventEmitter;
    events.on('error', (e: Error) => this.fail(`HiveServer2 connection failed: ${e.message}`));
    events.on('close', () => this.fail('HiveServer2 closed the connection'));
    const generated = rpc as unknown as GeneratedClient;
    const receive = generated.recv_FetchResults;
    const inPlace = this.inPlace;
    // thrift's connection calls recv_<method> with the seqid negated, the callback stored under that.
    generated.recv_FetchResults = function (input, mtype, rseqid) {
      if (!inPlace.delete(-rseqid) || mtype === EXCEPTION) return receive.call(this, input, mtype, rseqid);
      const callback = this._reqs[rseqid];
      delete this._reqs[rseqid];
      const result = readFetchResults(input);
      input.readMessageEnd();
      callback?.(result ? null : 'FetchResults failed: unknown result', result);
    };
  }

  /** `inPlace`: a FetchResults answer as hive-json.ts reads it (RawFetchResults), not thrift's objects. */
  call<R>(method: string, req: unknown, inPlace = false): Promise<R> {
    if (this.broken) return Promise.reject(this.broken);
    // Calls made in the same turn (a statement's schema, first rows and log) leave in one write: one wake-up
    // of the server's thread and one syscall on each side instead of one a call.
    if (this.socket && !this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(() => {
        this.corked = false;
        this.socket!.uncork();
      });
    }
    return new Promise<R>((resolve, reject) => {
      this.pending.add(reject);
      this.rpc[method].call(this.rpc, req, (err, res) => {
        this.pending.delete(reject);
        if (err) this.fail(`HiveServer2 ${method} failed: ${(err as Error).message ?? String(err)}`);
        if (err) reject(this.broken);
        else resolve(res as R);
      });
      if (inPlace) this.inPlace.add((this.rpc as unknown as GeneratedClient)._seqid);
    });
  }

  fail(message: string) {
    this.broken ??= new TransportError(message);
    this.inPlace.clear();
    for (const reject of this.pending) reject(this.broken);
    this.pending.clear();
  }

  close() {
    this.fail('connection closed');
    this.client.close();
  }
}

export async function openLink(e: EngineEndpoint, user: string, timeoutMs: number): Promise<Link> {
  const client = new HiveClient(TCLIService, T);
  client.on('error', () => undefined); // until the Link listens: an unheard 'error' would throw
  let socket: (Corkable & { destroy(): void }) | undefined;
  const plain = new auth.PlainTcpAuthentication({ username: user, password: 'anonymous' });
  // HiveServer2 with authentication NONE speaks SASL PLAIN; the socket is kept to abort a slow connect.
  const authProvider = {
    authenticate(t: Parameters<typeof plain.authenticate>[0]) {
      const done = plain.authenticate(t);
      socket = (t as unknown as { getTransport(): Corkable & { destroy(): void } }).getTransport();
      return done;
    },
  };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new TransportError(`no HiveServer2 answer at ${e.host}:${e.port} within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  const connecting = client.connect(
    { host: e.host, port: e.port, options: { transport: FramedTransport } },
    new connections.TcpConnection(),
    authProvider,
  );
  try {
    await Promise.race([connecting, timeout]);
  } catch (err) {
    socket?.destroy();
    connecting.catch(() => undefined);
    throw err instanceof TransportError
      ? err
      : new TransportError(`cannot connect to HiveServer2 at ${e.host}:${e.port}: ${(err as Error).message}`);
  } finally {
    clearTimeout(timer);
  }
  return new Link(
    client,
    client.getClient() as unknown as Record<string, (req: unknown, cb: Callback) => void>,
    socket,
  );
}
