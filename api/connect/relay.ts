// One client connection of the Spark Connect gateway, relayed frame by frame to one Spark Connect server over
// h2c. The gateway reads what it must decide on (each call's headers, and its first body bytes up to the
// session id) and writes the request headers again (its credentials out, the server's secret in); every other
// frame passes as the bytes it came as, and the server's answers, the bulk of a collect, are forwarded as they
// arrive with only their frame headers looked at. Node's HTTP/2 server and client on both sides of the hop cost
// several times the TLS itself for each MB of a collect (bench/connect.ts measures both against a bare TLS pipe).
//
// What the relay answers itself, at frame boundaries of the server's stream: refused calls (trailers-only with a
// grpc-status, then RST_STREAM), flow control for the bytes of those calls the server never sees, and, until a
// first call has chosen the server, the connection's SETTINGS acknowledgements and PINGs. The client's SETTINGS
// are replayed to the server when it is chosen and the server's acknowledgements of those are dropped.
// One connection goes to one server: a call whose session lives on another server is refused (pyspark and the
// JVM client open a connection per session). A server connection lost with calls open answers each of them with
// the status `failed` gives, then closes the client's connection, which the client opens again.
// Over 300 lines on purpose: one connection's state machine (its calls, the two directions, flow control),
// read top to bottom; the framing and header coding it uses are h2.ts.
import net from 'node:net';
import type { TLSSocket } from 'node:tls';
import { logger } from '../../lib/log';
import { GrpcError, grpcMessage, GrpcStatus, readSessionId } from './grpc';
import {
  ACK,
  dataOf,
  END_HEADERS,
  END_STREAM,
  Frame,
  FrameReader,
  FrameScanner,
  frame,
  goaway,
  H2Error,
  H2ProtocolError,
  HeaderDecoder,
  headersFragment,
  headersFrames,
  MAX_HEADER_BLOCK,
  PREFACE,
  rstStream,
  windowUpdate,
  type ParsedFrame,
} from './h2';

const log = logger('connect');

/** A client that has not sent the HTTP/2 preface by then is dropped. */
const PREFACE_TIMEOUT_MS = 10_000;
/** The server's bytes are read into a buffer of this size, one a connection. */
const READ_BUFFER = 256 * 1024;
/** Calls one connection may have open (checked or forwarded); more end the connection (ENHANCE_YOUR_CALM). */
const MAX_OPEN_CALLS = 1_000;

export interface Endpoint {
  host: string;
  port: number;
}

export interface CallRoute {
  endpoint: Endpoint;
  /** The request headers to send, pseudo-headers first, the server's secret included. */
  headers: [string, string][];
  /** The call is over (answered, reset, or its connection gone). Called once. */
  ended(): void;
  /** The connection to the server broke with this call open: the status to answer it with. */
  failed(cause: string): Promise<GrpcError>;
}

export interface RelayHooks {
  /**
   * A new call: where it goes, or throws a GrpcError to answer it with. `headers` holds each name's first value
   * (names lower case); `sessionId` settles once the body's first bytes are in.
   */
  admit(headers: Record<string, string>, list: [string, string][], sessionId: Promise<string>): Promise<CallRoute>;
}

interface Call {
  id: number;
  state: 'checking' | 'forwarded';
  /** Frames of the call received while it is checked, sent once it is forwarded. */
  held: Buffer[];
  /** Flow-controlled bytes held: credited back to the client if the call is refused. */
  heldBytes: number;
  body: Buffer[];
  sessionId: { resolve(id: string): void; reject(e: Error): void; settled: boolean };
  endsWithHeaders: boolean;
  decision?: { route: CallRoute } | { error: GrpcError };
  cancelled: boolean;
  route?: CallRoute;
  responded: boolean;
}

export class Relay {
  private readonly reader = new FrameReader();
  private readonly decoder = new HeaderDecoder();
  private readonly calls = new Map<number, Call>();
  /** New calls in stream order: a server must see streams opened in increasing order. */
  private readonly opening: Call[] = [];
  private prefaceSeen = false;
  private lastStream = 0;
  /** A header block being received: its stream, whether it ends the stream, its fragments. */
  private block?: { streamId: number; endStream: boolean; parts: Buffer[]; size: number };
  private upstream?: net.Socket;
  private endpoint?: Endpoint;
  /** Until the server is chosen: the client's SETTINGS and connection WINDOW_UPDATEs, replayed to it then. */
  private early: Buffer[] = [];
  private replayedSettings = 0;
  /** The server's stream, scanned for frame boundaries once its acknowledgements of the replay are dropped. */
  private upstreamReader? = new FrameReader();
  /** In that first phase: a header block of the server's is cut between frames already written. */
  private readerInBlock = false;
  private readonly scanner = new FrameScanner();
  /** The relay's own frames for the client, written at the next frame boundary of the server's stream. */
  private own: Buffer[] = [];
  private ownSettingsUnacked = 1;
  private closed = false;
  private upstreamGone = false;
  private readonly prefaceTimer: NodeJS.Timeout;

  constructor(
    private readonly client: TLSSocket,
    private readonly hooks: RelayHooks,
  ) {
    client.setNoDelay(true);
    // The relay's own SETTINGS (all defaults) until the server's, forwarded later, say otherwise.
    client.write(frame(Frame.SETTINGS, 0, 0));
    this.prefaceTimer = setTimeout(() => this.prefaceSeen || client.destroy(), PREFACE_TIMEOUT_MS);
    this.prefaceTimer.unref();
    let pending = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      try {
        if (!this.prefaceSeen) {
          pending = Buffer.concat([pending, chunk]);
          if (pending.length < PREFACE.length) return;
          if (!pending.subarray(0, PREFACE.length).equals(PREFACE))
            throw new H2ProtocolError(H2Error.PROTOCOL_ERROR, 'not an HTTP/2 client');
          this.prefaceSeen = true;
          clearTimeout(this.prefaceTimer);
          chunk = pending.subarray(PREFACE.length);
        }
        this.upstream?.cork();
        this.reader.push(chunk, (f) => this.fromClient(f));
        this.upstream?.uncork();
      } catch (e) {
        this.fail(e);
      }
    });
    client.on('drain', () => this.upstream?.resume());
    client.on('error', () => undefined);
    client.on('close', () => this.close());
  }

  // ---- the client's frames ----

  private fromClient(f: ParsedFrame): void {
    if (this.block && f.type !== Frame.CONTINUATION)
      throw new H2ProtocolError(H2Error.PROTOCOL_ERROR, 'a header block was interrupted');
    switch (f.type) {
      case Frame.HEADERS:
      case Frame.CONTINUATION:
        return this.headerFrame(f);
      case Frame.DATA:
        return this.data(f);
      case Frame.RST_STREAM:
        return this.reset(f);
      case Frame.WINDOW_UPDATE:
        if (f.streamId === 0) return this.upstream ? this.toServer(f.raw) : void this.early.push(f.raw);
        return this.onStream(f);
      case Frame.SETTINGS:
        if (f.flags & ACK) {
          if (this.ownSettingsUnacked > 0) this.ownSettingsUnacked--;
          else this.toServer(f.raw);
        } else if (this.upstream) this.toServer(f.raw);
        else {
          this.early.push(f.raw);
          this.replayedSettings++;
          this.toClient(frame(Frame.SETTINGS, ACK, 0));
        }
        return;
      case Frame.PING:
        if (this.upstream) this.toServer(f.raw);
        else if (!(f.flags & ACK)) this.toClient(frame(Frame.PING, ACK, 0, f.payload));
        return;
      case Frame.PRIORITY:
        return this.onStream(f);
      case Frame.GOAWAY:
        if (this.upstream) this.toServer(f.raw);
        return;
      case Frame.PUSH_PROMISE:
        throw new H2ProtocolError(H2Error.PROTOCOL_ERROR, 'a client may not push');
      default:
        return; // HTTP/2 says a frame of an unknown type is ignored
    }
  }

  /**
   * A frame of one stream that the relay neither reads nor answers: with its call, or after it. Frames of streams
   * that are no call (refused, or ended by the server) are dropped: only an admitted call's frames reach the server.
   */
  private onStream(f: ParsedFrame): void {
    const call = this.calls.get(f.streamId);
    if (call?.state === 'checking') call.held.push(f.raw);
    else if (call) this.toServer(f.raw);
  }

  private headerFrame(f: ParsedFrame): void {
    if (f.type === Frame.CONTINUATION && (!this.block || this.block.streamId !== f.streamId))
      throw new H2ProtocolError(H2Error.PROTOCOL_ERROR, 'CONTINUATION without its HEADERS');
    if (f.type === Frame.HEADERS) {
      if (f.streamId === 0) throw new H2ProtocolError(H2Error.PROTOCOL_ERROR, 'HEADERS on stream 0');
      this.block = { streamId: f.streamId, endStream: !!(f.flags & END_STREAM), parts: [], size: 0 };
    }
    const b = this.block!;
    const part = headersFragment(f);
    b.size += part.length;
    if (b.size > MAX_HEADER_BLOCK) throw new H2ProtocolError(H2Error.PROTOCOL_ERROR, 'a header block over 64 KiB');
    b.parts.push(part);
    if (!(f.flags & END_HEADERS)) return;
    this.block = undefined;
    // Every block is decoded, whatever becomes of its call: the client's table changes with each. Names are
    // lower case in HTTP/2; any other spelling is taken as that, so no filter by name can be passed by case.
    const list = this.decoder.decode(Buffer.concat(b.parts)).map(([k, v]): [string, string] => [k.toLowerCase(), v]);
    const id = b.streamId;
    const known = this.calls.get(id);
    if (known || id <= this.lastStream) {
      // Trailers of a request (gRPC clients send none): only the end of the request they mark is passed on, as an
      // empty DATA frame, so no header but an admitted call's reaches the server.
      if (!known || !b.endStream) return;
      const end = frame(Frame.DATA, END_STREAM, id);
      if (known.state === 'checking') known.held.push(end);
      else this.toServer(end);
      this.clientEnded(known);
      return;
    }
    if (id % 2 === 0) throw new H2ProtocolError(H2Error.PROTOCOL_ERROR, 'a client stream with an even id');
    if (this.calls.size >= MAX_OPEN_CALLS)
      throw new H2ProtocolError(H2Error.ENHANCE_YOUR_CALM, `over ${MAX_OPEN_CALLS} calls open on one connection`);
    this.lastStream = id;
    this.open(id, list, b.endStream);
  }

  private open(id: number, list: [string, string][], endStream: boolean): void {
    const headers: Record<string, string> = {};
    for (const [k, v] of list) if (!(k in headers)) headers[k] = v;
    let sessionId!: Call['sessionId'];
    const idPromise = new Promise<string>((resolve, reject) => {
      sessionId = {
        resolve: (v) => ((sessionId.settled = true), resolve(v)),
        reject: (e) => ((sessionId.settled = true), reject(e)),
        settled: false,
      };
    });
    idPromise.catch(() => undefined);
    const call: Call = {
      id,
      state: 'checking',
      held: [],
      heldBytes: 0,
      body: [],
      sessionId,
      endsWithHeaders: endStream,
      cancelled: false,
      responded: false,
    };
    this.calls.set(id, call);
    this.opening.push(call);
    if (endStream) this.clientEnded(call);
    this.hooks.admit(headers, list, idPromise).then(
      (route) => this.decided(call, { route }),
      (e: unknown) =>
        this.decided(call, {
          error:
            e instanceof GrpcError
              ? e
              : (log.warn('connect call failed', { err: String(e) }),
                new GrpcError(GrpcStatus.UNAVAILABLE, 'the gateway cannot reach its stores right now; try again')),
        }),
    );
  }

  private data(f: ParsedFrame): void {
    const call = this.calls.get(f.streamId);
    if (!call) {
      if (f.streamId === 0 || f.streamId > this.lastStream)
        throw new H2ProtocolError(H2Error.PROTOCOL_ERROR, 'DATA on a stream not opened');
      // A refused call's, or one the server has ended: the server never sees it, its window is given back.
      this.credit(f.payload.length);
      return;
    }
    if (call.state === 'forwarded') this.toServer(f.raw);
    else {
      call.held.push(f.raw);
      call.heldBytes += f.payload.length;
      if (!call.sessionId.settled) {
        call.body.push(dataOf(f));
        const r = readSessionId(Buffer.concat(call.body));
        if ('sessionId' in r) call.sessionId.resolve(r.sessionId);
        else if ('error' in r) call.sessionId.reject(new GrpcError(GrpcStatus.INVALID_ARGUMENT, r.error));
        if (call.sessionId.settled) call.body = [];
      }
    }
    if (f.flags & END_STREAM) this.clientEnded(call);
  }

  private clientEnded(call: Call): void {
    if (!call.sessionId.settled)
      call.sessionId.reject(new GrpcError(GrpcStatus.INVALID_ARGUMENT, 'the request has no session_id'));
  }

  private reset(f: ParsedFrame): void {
    const call = this.calls.get(f.streamId);
    if (call?.state === 'checking') {
      call.cancelled = true;
      if (!call.sessionId.settled) call.sessionId.reject(new GrpcError(GrpcStatus.CANCELLED, 'the call was cancelled'));
      return;
    }
    if (call) {
      this.toServer(f.raw);
      this.finish(call);
    }
  }

  // ---- decisions, in stream order ----

  private decided(call: Call, d: NonNullable<Call['decision']>): void {
    call.decision = d;
    if (this.closed) {
      if ('route' in d) d.route.ended();
      return;
    }
    this.upstream?.cork();
    while (this.opening[0]?.decision) this.apply(this.opening.shift()!);
    this.upstream?.uncork();
  }

  private apply(call: Call): void {
    let d = call.decision!;
    if (call.cancelled) {
      if ('route' in d) d.route.ended();
      this.calls.delete(call.id);
      this.credit(call.heldBytes);
      return;
    }
    if ('route' in d && (this.upstreamGone || (this.endpoint && !sameEndpoint(this.endpoint, d.route.endpoint)))) {
      d.route.ended();
      d = {
        error: this.upstreamGone
          ? new GrpcError(GrpcStatus.UNAVAILABLE, 'the connection to the Spark Connect server closed; try again')
          : new GrpcError(
              GrpcStatus.FAILED_PRECONDITION,
              'this connection already carries calls to another Spark Connect server; open a new one for this session',
            ),
      };
    }
    if ('error' in d) return this.refuse(call, d.error);
    call.route = d.route;
    call.state = 'forwarded';
    if (!this.upstream) this.attach(d.route.endpoint);
    this.toServer(headersFrames(call.id, d.route.headers, call.endsWithHeaders));
    for (const f of call.held) this.toServer(f);
    call.held = [];
  }

  private refuse(call: Call, e: GrpcError): void {
    this.calls.delete(call.id);
    this.credit(call.heldBytes);
    this.toClient(statusFrames(call.id, e, false));
    // The answer ended the call; whatever the client still sends on it is not wanted.
    this.toClient(rstStream(call.id, H2Error.NO_ERROR));
  }

  /** Bytes of the client's the server never sees: the connection window they took is given back. */
  private credit(bytes: number): void {
    if (bytes > 0) this.toClient(windowUpdate(0, bytes));
  }

  private finish(call: Call): void {
    if (!this.calls.delete(call.id)) return;
    call.route?.ended();
  }

  // ---- the server ----

  private attach(endpoint: Endpoint): void {
    this.endpoint = endpoint;
    // The server's bytes are read into one buffer of the connection's, reused read after read (toClientBytes).
    const up = net.connect({
      host: endpoint.host,
      port: endpoint.port,
      noDelay: true,
      onread: {
        buffer: Buffer.allocUnsafe(READ_BUFFER),
        callback: (n: number, buf: Uint8Array) => {
          try {
            this.fromServer(Buffer.from(buf.buffer, buf.byteOffset, n));
          } catch (e) {
            this.fail(e);
          }
          return true;
        },
      },
    });
    this.upstream = up;
    up.write(Buffer.concat([PREFACE, ...this.early]));
    this.early = [];
    up.on('drain', () => this.client.resume());
    up.on('error', (e: NodeJS.ErrnoException) => void this.upstreamLost(e.code ?? e.message));
    up.on('close', () => void this.upstreamLost('the connection closed'));
  }

  private fromServer(chunk: Buffer): void {
    if (this.upstreamReader) {
      // Until the server has acknowledged the replayed SETTINGS: frame by frame, those acknowledgements dropped.
      const keep: Buffer[] = [];
      this.upstreamReader.push(chunk, (f) => {
        if (f.type === Frame.SETTINGS && f.flags & ACK && this.replayedSettings > 0) this.replayedSettings--;
        else {
          if (f.type === Frame.HEADERS || f.type === Frame.CONTINUATION) this.readerInBlock = !(f.flags & END_HEADERS);
          this.serverFrame(f.type, f.flags, f.streamId);
          keep.push(f.raw);
        }
      });
      if (keep.length) this.client.write(Buffer.concat(keep));
      if (!this.readerInBlock) this.flushOwn();
      if (this.replayedSettings > 0) return;
      if (this.readerInBlock) this.scanner.inBlock = true;
      chunk = this.upstreamReader.take();
      this.upstreamReader = undefined;
      if (!chunk.length) return;
    }
    let from = 0;
    this.scanner.scan(
      chunk,
      (type, flags, id) => this.serverFrame(type, flags, id),
      (at) => {
        if (!this.own.length) return;
        this.toClientBytes(chunk.subarray(from, at));
        from = at;
        this.flushOwn();
      },
    );
    if (!this.toClientBytes(from ? chunk.subarray(from) : chunk)) this.upstream?.pause();
  }

  /**
   * Bytes of the server's read buffer, which the next read overwrites. A TLS socket with nothing queued encrypts
   * what it is given before write() returns, so those are written as they are; behind queued writes they wait,
   * so they are copied. Reading into one buffer spares V8 an external allocation per read: at hundreds of MB/s
   * those made it collect garbage often, and each collection costs in proportion to the isolate's heap.
   */
  private toClientBytes(b: Buffer): boolean {
    const now = this.client.writableLength === 0 && !this.client.writableCorked;
    return this.client.write(now ? b : Buffer.from(b));
  }

  private serverFrame(type: number, flags: number, id: number): void {
    const call = id ? this.calls.get(id) : undefined;
    if (!call) return;
    if (type === Frame.HEADERS) {
      call.responded = true;
      if (flags & END_STREAM) this.finish(call);
    } else if ((type === Frame.DATA && flags & END_STREAM) || type === Frame.RST_STREAM) this.finish(call);
  }

  /** The server's connection broke: each open call is answered with why, then the client's connection closes. */
  private async upstreamLost(cause: string): Promise<void> {
    if (this.upstreamGone) return;
    this.upstreamGone = true;
    if (this.closed) return;
    const open = [...this.calls.values()].filter((c) => c.state === 'forwarded');
    const answers = await Promise.all(
      open.map((c) => c.route!.failed(cause).catch(() => new GrpcError(GrpcStatus.UNAVAILABLE, 'try again'))),
    );
    if (this.closed) return;
    if (!this.atBoundary()) {
      // Cut inside a frame of the server's: nothing more can be said on this connection.
      this.client.destroy();
      return;
    }
    open.forEach((c, i) => {
      if (!this.calls.has(c.id)) return;
      this.toClient(statusFrames(c.id, answers[i], c.responded));
      this.finish(c);
    });
    this.toClient(goaway(this.lastStream, H2Error.NO_ERROR));
    this.client.end();
  }

  // ---- writing ----

  private toServer(b: Buffer): void {
    if (this.upstream && !this.upstreamGone && !this.upstream.write(b)) this.client.pause();
  }

  /** A frame of the relay's own for the client: now if the server's stream is between frames, else at its next. */
  private toClient(b: Buffer): void {
    this.own.push(b);
    if (this.atBoundary()) this.flushOwn();
  }

  private atBoundary(): boolean {
    if (!this.upstream) return true;
    return this.upstreamReader ? !this.readerInBlock : this.scanner.atBoundary;
  }

  private flushOwn(): void {
    if (!this.own.length || this.closed) return;
    const b = Buffer.concat(this.own);
    this.own = [];
    this.client.write(b);
  }

  private fail(e: unknown): void {
    const code = e instanceof H2ProtocolError ? e.code : H2Error.INTERNAL_ERROR;
    if (!(e instanceof H2ProtocolError)) log.warn('connect relay failed', { err: String(e) });
    if (this.atBoundary() && !this.closed) this.client.write(goaway(this.lastStream, code));
    this.client.destroy();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.prefaceTimer);
    this.upstream?.destroy();
    for (const call of this.calls.values()) {
      if (!call.sessionId.settled) call.sessionId.reject(new GrpcError(GrpcStatus.CANCELLED, 'the connection closed'));
      call.route?.ended();
    }
    this.calls.clear();
  }
}

const sameEndpoint = (a: Endpoint, b: Endpoint) => a.host === b.host && a.port === b.port;

/** A call's grpc-status: trailers-only (RFC: HEADERS with :status) when nothing was answered yet, else trailers. */
function statusFrames(streamId: number, e: GrpcError, responded: boolean): Buffer {
  const status: [string, string][] = [
    ['grpc-status', String(e.code)],
    ['grpc-message', grpcMessage(e.message)],
  ];
  return headersFrames(
    streamId,
    responded ? status : [[':status', '200'], ['content-type', 'application/grpc'], ...status],
    true,
  );
}
