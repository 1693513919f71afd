// The little of HTTP/2 (RFC 9113) the Spark Connect gateway's relay (relay.ts) speaks itself: frame headers,
// frames it writes (settings, pings, window updates, resets, goaway, header blocks), a reader that cuts the
// client's bytes into frames, a scanner that follows frame boundaries in the server's bytes without copying
// them, and header blocks: decoded with the client's HPACK table (hpack.js), encoded as literals that never
// touch the peer's table, so the gateway can drop, add and answer headers while every other byte passes as is.
import hpack from 'hpack.js';

export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export const Frame = {
  DATA: 0,
  HEADERS: 1,
  PRIORITY: 2,
  RST_STREAM: 3,
  SETTINGS: 4,
  PUSH_PROMISE: 5,
  PING: 6,
  GOAWAY: 7,
  WINDOW_UPDATE: 8,
  CONTINUATION: 9,
} as const;

export const END_STREAM = 0x1;
/** SETTINGS and PING */
export const ACK = 0x1;
export const END_HEADERS = 0x4;
export const PADDED = 0x8;
export const PRIORITY = 0x20;

export const H2Error = {
  NO_ERROR: 0,
  PROTOCOL_ERROR: 1,
  INTERNAL_ERROR: 2,
  FRAME_SIZE_ERROR: 6,
  CANCEL: 8,
  COMPRESSION_ERROR: 9,
  ENHANCE_YOUR_CALM: 11,
} as const;

/** Every peer accepts frames of this size (SETTINGS_MAX_FRAME_SIZE's least value). */
const DEFAULT_MAX_FRAME = 16_384;
/** The largest frame the protocol allows; a bigger length is a broken peer. */
const PROTOCOL_MAX_FRAME = 2 ** 24 - 1;
/** Header blocks (HEADERS and its CONTINUATIONs) the gateway decodes: larger ones end the connection. */
export const MAX_HEADER_BLOCK = 64 * 1024;

export class H2ProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'H2ProtocolError';
  }
}

export function frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const f = Buffer.allocUnsafe(9 + payload.length);
  f.writeUIntBE(payload.length, 0, 3);
  f[3] = type;
  f[4] = flags;
  f.writeUInt32BE(streamId & 0x7fffffff, 5);
  payload.copy(f, 9);
  return f;
}

const u32 = (...values: number[]): Buffer => {
  const b = Buffer.allocUnsafe(4 * values.length);
  values.forEach((v, i) => b.writeUInt32BE(v >>> 0, 4 * i));
  return b;
};

export const windowUpdate = (streamId: number, increment: number) =>
  frame(Frame.WINDOW_UPDATE, 0, streamId, u32(increment));
export const rstStream = (streamId: number, code: number) => frame(Frame.RST_STREAM, 0, streamId, u32(code));
export const goaway = (lastStreamId: number, code: number) => frame(Frame.GOAWAY, 0, 0, u32(lastStreamId, code));

/** An HPACK integer with an N-bit prefix, its first byte's high bits set to `high` (RFC 7541: a prefix of all ones means more bytes follow, 7 bits each, low first). */
function hpackInt(n: number, prefixBits: number, high: number): number[] {
  const max = (1 << prefixBits) - 1;
  if (n < max) return [high | n];
  const out = [high | max];
  n -= max;
  while (n >= 128) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}

/**
 * A header block of literals without indexing (RFC 7541, "literal header field without indexing", first byte 0), names and values as bytes (latin1): it adds
 * nothing to the receiver's dynamic table, so it may be put between blocks another encoder wrote.
 */
export function encodeHeaderBlock(headers: readonly (readonly [string, string])[]): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of headers) {
    const n = Buffer.from(name, 'latin1');
    const v = Buffer.from(value, 'latin1');
    parts.push(Buffer.from([0x00, ...hpackInt(n.length, 7, 0)]), n, Buffer.from(hpackInt(v.length, 7, 0)), v);
  }
  return Buffer.concat(parts);
}

/** HEADERS, with CONTINUATIONs when the block is over the size every peer accepts. */
export function headersFrames(streamId: number, headers: readonly (readonly [string, string])[], endStream: boolean) {
  const block = encodeHeaderBlock(headers);
  const out: Buffer[] = [];
  for (let at = 0; at === 0 || at < block.length; at += DEFAULT_MAX_FRAME) {
    const piece = block.subarray(at, at + DEFAULT_MAX_FRAME);
    const last = at + DEFAULT_MAX_FRAME >= block.length;
    const type = at === 0 ? Frame.HEADERS : Frame.CONTINUATION;
    const flags = (last ? END_HEADERS : 0) | (at === 0 && endStream ? END_STREAM : 0);
    out.push(frame(type, flags, streamId, piece));
  }
  return Buffer.concat(out);
}

/** Decodes the header blocks one peer sends, in order, keeping that peer's dynamic table (RFC 7541). */
export class HeaderDecoder {
  private readonly table = hpack.table.create({ maxSize: MAX_HEADER_BLOCK });

  constructor() {
    // What every encoder starts from (SETTINGS_HEADER_TABLE_SIZE's initial value); it may signal other sizes.
    this.table.updateSize(4096);
  }

  /** Throws H2ProtocolError (COMPRESSION_ERROR): the connection cannot go on after a block it cannot decode. */
  decode(block: Buffer): [string, string][] {
    try {
      return this.read(block);
    } catch (e) {
      throw new H2ProtocolError(H2Error.COMPRESSION_ERROR, `a header block could not be decoded: ${String(e)}`);
    }
  }

  private read(block: Buffer): [string, string][] {
    const d = hpack.decoder.create();
    d.push(block);
    const out: [string, string][] = [];
    let size = 0;
    const entry = (index: number) => {
      const e = this.table.lookup(index);
      if (!e) throw new Error(`no table entry ${index}`);
      return e as { name: string; value: string; nameSize?: number };
    };
    while (!d.isEmpty()) {
      if (d.decodeBit()) {
        const e = entry(d.decodeInt());
        out.push([e.name, e.value]);
      } else {
        const incremental = d.decodeBit();
        if (!incremental) {
          if (d.decodeBit()) {
            this.table.updateSize(d.decodeInt());
            continue;
          }
          d.decodeBit(); // never indexed: the gateway indexes nothing anyway
        }
        const index = d.decodeInt();
        let name: string;
        let nameSize: number;
        if (index === 0) {
          const bytes = d.decodeStr();
          name = hpack.utils.stringify(bytes);
          nameSize = bytes.length;
        } else {
          const e = entry(index);
          name = e.name;
          nameSize = e.nameSize ?? Buffer.byteLength(e.name, 'latin1');
        }
        const valueBytes = d.decodeStr();
        const value = hpack.utils.stringify(valueBytes);
        if (incremental) this.table.add(name, value, nameSize, valueBytes.length);
        out.push([name, value]);
      }
      const [n, v] = out[out.length - 1] ?? ['', ''];
      size += n.length + v.length + 32;
      if (size > MAX_HEADER_BLOCK) throw new Error('the header list is over 64 KiB');
    }
    return out;
  }
}

export interface ParsedFrame {
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
  /** The whole frame as received, header included: what is forwarded as is. */
  raw: Buffer;
}

/** Cuts a byte stream into whole frames (for the client's side, whose frames the gateway reads). */
export class FrameReader {
  private rest: Buffer = Buffer.alloc(0);

  push(chunk: Buffer, each: (f: ParsedFrame) => void): void {
    const buf = this.rest.length ? Buffer.concat([this.rest, chunk]) : chunk;
    let at = 0;
    while (buf.length - at >= 9) {
      const length = buf.readUIntBE(at, 3);
      if (length > PROTOCOL_MAX_FRAME) throw new H2ProtocolError(H2Error.FRAME_SIZE_ERROR, 'frame too large');
      if (buf.length - at < 9 + length) break;
      const raw = buf.subarray(at, at + 9 + length);
      at += 9 + length;
      each({ type: raw[3], flags: raw[4], streamId: raw.readUInt32BE(5) & 0x7fffffff, payload: raw.subarray(9), raw });
    }
    // What is left is copied, so a large chunk is not kept alive by its last few bytes.
    this.rest = at === buf.length ? Buffer.alloc(0) : Buffer.from(buf.subarray(at));
  }

  /** Bytes received and not yet a whole frame. */
  take(): Buffer {
    const r = this.rest;
    this.rest = Buffer.alloc(0);
    return r;
  }
}

/**
 * Follows the frames of a byte stream that is forwarded as it comes (the server's side), without copying:
 * `onFrame` for each frame header, `onBoundary(offset)` where a frame ends inside the chunk outside a header
 * block, the only places a frame of the gateway's own may go in between.
 */
export class FrameScanner {
  private left = 0;
  private readonly head = Buffer.alloc(9);
  private headHave = 0;
  /** Inside a header block: set by whoever handed the stream over mid-block. */
  inBlock = false;

  get atBoundary(): boolean {
    return this.left === 0 && this.headHave === 0 && !this.inBlock;
  }

  scan(
    chunk: Buffer,
    onFrame: (type: number, flags: number, streamId: number) => void,
    onBoundary: (offset: number) => void,
  ): void {
    let i = 0;
    const n = chunk.length;
    while (i < n) {
      if (this.left > 0) {
        const take = Math.min(this.left, n - i);
        this.left -= take;
        i += take;
        if (this.left === 0 && !this.inBlock) onBoundary(i);
        continue;
      }
      const take = Math.min(9 - this.headHave, n - i);
      chunk.copy(this.head, this.headHave, i, i + take);
      this.headHave += take;
      i += take;
      if (this.headHave < 9) break;
      this.headHave = 0;
      const type = this.head[3];
      const flags = this.head[4];
      if (type === Frame.HEADERS || type === Frame.PUSH_PROMISE || type === Frame.CONTINUATION)
        this.inBlock = !(flags & END_HEADERS);
      this.left = this.head.readUIntBE(0, 3);
      onFrame(type, flags, this.head.readUInt32BE(5) & 0x7fffffff);
      if (this.left === 0 && !this.inBlock) onBoundary(i);
    }
  }
}

/** A HEADERS frame's header block fragment: its padding and priority fields taken off. */
export function headersFragment(f: ParsedFrame): Buffer {
  let p = f.payload;
  let pad = 0;
  if (f.flags & PADDED) {
    if (p.length < 1) throw new H2ProtocolError(H2Error.PROTOCOL_ERROR, 'a padded frame without its pad length');
    pad = p[0];
    p = p.subarray(1);
  }
  if (f.type === Frame.HEADERS && f.flags & PRIORITY) p = p.subarray(5);
  if (pad > p.length) throw new H2ProtocolError(H2Error.PROTOCOL_ERROR, 'padding longer than the frame');
  return p.subarray(0, p.length - pad);
}

/** A DATA frame's data: its padding taken off. */
export function dataOf(f: ParsedFrame): Buffer {
  if (!(f.flags & PADDED)) return f.payload;
  const pad = f.payload[0] ?? 0;
  if (pad >= f.payload.length) throw new H2ProtocolError(H2Error.PROTOCOL_ERROR, 'padding longer than the frame');
  return f.payload.subarray(1, f.payload.length - pad);
}
