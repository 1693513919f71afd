// The gateway's reading of a Spark Connect request's session_id from the first bytes of its gRPC frame, and the
// percent-encoding of grpc-message (api/connect/grpc.ts): pure functions, no servers.
import { describe, expect, it } from 'vitest';
import { grpcMessage, readSessionId } from '../../api/connect/grpc';

/** A gRPC frame (uncompressed) of a message whose field 1 is `sessionId`, then `rest` (other fields' bytes). */
function frame(sessionId: string, rest = Buffer.from([0x12, 0x02, 0x0a, 0x00])): Buffer {
  const id = Buffer.from(sessionId, 'utf8');
  const msg = Buffer.concat([Buffer.from([0x0a, id.length]), id, rest]);
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(msg.length, 1);
  return Buffer.concat([prefix, msg]);
}

describe('readSessionId', () => {
  const uuid = '6f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f';

  it('reads field 1 of the first message, whole or as its bytes arrive', () => {
    const f = frame(uuid);
    expect(readSessionId(f)).toEqual({ sessionId: uuid });
    for (const cut of [0, 3, 5, 6, 7, 20, 7 + uuid.length - 1])
      expect(readSessionId(f.subarray(0, cut))).toEqual({ need: true });
    expect(readSessionId(f.subarray(0, 7 + uuid.length))).toEqual({ sessionId: uuid });
  });

  it('reads a two-byte varint length', () => {
    const long = 'x'.repeat(200);
    const id = Buffer.from(long);
    const msg = Buffer.concat([Buffer.from([0x0a, 0xc8, 0x01]), id]);
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(msg.length, 1);
    expect(readSessionId(Buffer.concat([prefix, msg]))).toEqual({ sessionId: long });
  });

  it('refuses what is no Spark Connect request: compressed, no field 1 first, empty, too long, unprintable', () => {
    const compressed = frame(uuid);
    compressed[0] = 1;
    expect(readSessionId(compressed)).toMatchObject({ error: expect.stringMatching(/compressed/) });
    const otherField = frame(uuid);
    otherField[5] = 0x12;
    expect(readSessionId(otherField)).toMatchObject({ error: expect.stringMatching(/no session_id/) });
    expect(readSessionId(Buffer.from([0, 0, 0, 0, 0]))).toMatchObject({
      error: expect.stringMatching(/no session_id/),
    });
    expect(readSessionId(frame(''))).toMatchObject({ error: expect.stringMatching(/empty or too long/) });
    expect(readSessionId(frame('a b'))).toMatchObject({ error: expect.stringMatching(/printable/) });
    // A length beyond the frame's own.
    const lying = frame(uuid, Buffer.alloc(0));
    lying.writeUInt32BE(10, 1);
    expect(readSessionId(lying)).toMatchObject({ error: expect.stringMatching(/malformed/) });
  });
});

describe('grpcMessage', () => {
  it("percent-encodes '%' and everything outside printable ASCII, as gRPC over HTTP/2 asks", () => {
    expect(grpcMessage('plain text: ok')).toBe('plain text: ok');
    expect(grpcMessage('100% sure')).toBe('100%25 sure');
    expect(grpcMessage('line\nbreak é')).toBe('line%0Abreak %C3%A9');
  });
});
