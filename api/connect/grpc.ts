// The little of gRPC the Spark Connect gateway needs to speak itself: status codes, grpc-message's encoding,
// and the session_id of a request (field 1 of every Spark Connect request message), read from the first bytes
// of the first gRPC frame without decoding the rest of the plan.

/** grpc-status codes the gateway answers with (grpc/doc/statuscodes.md). */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  /** The only code pyspark 3.5 retries (with backoff): for what passes by itself, never for a dead session. */
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;
export type GrpcStatus = (typeof GrpcStatus)[keyof typeof GrpcStatus];

/** A refusal of the gateway: its code and a message for the client. */
export class GrpcError extends Error {
  constructor(
    readonly code: GrpcStatus,
    message: string,
  ) {
    super(message);
    this.name = 'GrpcError';
  }
}

/** grpc-message is percent-encoded (gRPC over HTTP/2: printable ASCII but '%' as is). */
export const grpcMessage = (m: string): string =>
  Array.from(Buffer.from(m, 'utf8'))
    .map((b) =>
      b >= 0x20 && b <= 0x7e && b !== 0x25
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');

/** What the first bytes of a request tell: its session id, or why they cannot. */
export type SessionIdRead = { sessionId: string } | { need: true } | { error: string };

/**
 * Reads field 1 (session_id, a string) of the first message of a gRPC request body from its first bytes: the
 * 5-byte frame prefix (compressed flag, length), then the protobuf tag 0x0a, a varint length and the string.
 * Protobuf writers put fields in number order, so it comes first. `need`: more bytes are needed.
 */
export function readSessionId(buf: Buffer): SessionIdRead {
  if (buf.length < 5) return { need: true };
  if (buf[0] !== 0) return { error: 'compressed requests are not accepted by the Spark Connect gateway' };
  const frameLength = buf.readUInt32BE(1);
  if (buf.length < 6) return frameLength === 0 ? { error: 'the request has no session_id' } : { need: true };
  if (buf[5] !== 0x0a) return { error: 'the request has no session_id (field 1 of every Spark Connect request)' };
  let len = 0;
  let shift = 0;
  let i = 6;
  for (;;) {
    if (i >= buf.length) return { need: true };
    const b = buf[i++];
    len |= (b & 0x7f) << shift;
    if (!(b & 0x80)) break;
    shift += 7;
    if (shift > 21) return { error: "the request's session_id is too long" };
  }
  if (len === 0 || len > 256) return { error: "the request's session_id is empty or too long" };
  if (i + len > 5 + frameLength) return { error: "the request's first message is malformed" };
  if (buf.length < i + len) return { need: true };
  const sessionId = buf.subarray(i, i + len).toString('utf8');
  // pyspark makes UUIDs; anything printable and short is accepted, nothing that could break a log line.
  if (!/^[\x21-\x7e]{1,256}$/.test(sessionId)) return { error: "the request's session_id is not printable ASCII" };
  return { sessionId };
}
