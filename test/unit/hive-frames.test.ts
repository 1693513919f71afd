// The HiveServer2 link's framed transport (lib/sql/hive-link.ts): whole frames out of any split of the bytes,
// and the end of each frame signalled the way thrift's connection expects (it reads a frame's messages until a
// read runs past the end, catching thrift's InputBufferUnderrunError), with one error instance instead of a
// new error and stack trace per frame. And the link's calls made in one turn leaving in one write.
import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HiveClient } from 'hive-driver';
import { FramedTransport, Link } from '../../lib/sql/hive-link';

const requireHere = createRequire(import.meta.url);
const thriftIndex = requireHere.resolve('thrift', { paths: [requireHere.resolve('hive-driver')] });
const InputBufferUnderrunError = requireHere(path.join(path.dirname(thriftIndex), 'input_buffer_underrun_error.js'));

type Frame = { readI32(): number; readByte(): number };
const frame = (...ints: number[]) => {
  const b = Buffer.alloc(4 + 4 * ints.length);
  b.writeInt32BE(4 * ints.length, 0);
  ints.forEach((v, i) => b.writeInt32BE(v, 4 + 4 * i));
  return b;
};

describe('HiveServer2 framed transport', () => {
  it('hands over whole frames, however the bytes arrive', () => {
    const got: number[][] = [];
    const receive = FramedTransport.receiver((t) => {
      const f = t as Frame;
      const ints: number[] = [];
      for (;;) {
        try {
          ints.push(f.readI32());
        } catch (e) {
          expect(e).toBeInstanceOf(InputBufferUnderrunError);
          break;
        }
      }
      got.push(ints);
    });
    const bytes = Buffer.concat([frame(1, 2), frame(3), frame(4, 5, 6)]);
    // One byte at a time, then everything at once.
    for (let i = 0; i < bytes.length; i++) receive(bytes.subarray(i, i + 1));
    receive(Buffer.from(bytes));
    expect(got).toEqual([[1, 2], [3], [4, 5, 6], [1, 2], [3], [4, 5, 6]]);
  });

  it("ends every frame with thrift's own error class, one instance, no new stack trace each time", () => {
    const ends: unknown[] = [];
    const receive = FramedTransport.receiver((t) => {
      const f = t as Frame;
      f.readI32();
      try {
        f.readByte();
      } catch (e) {
        ends.push(e);
      }
    });
    receive(Buffer.concat([frame(7), frame(8)]));
    expect(ends).toHaveLength(2);
    expect(ends[0]).toBeInstanceOf(InputBufferUnderrunError);
    expect(ends[1]).toBe(ends[0]);
  });
});

describe('HiveServer2 link', () => {
  it('corks the socket for the calls made in one turn (one write: Node sends corked writes together)', async () => {
    const events: string[] = [];
    const socket = { cork: () => events.push('cork'), uncork: () => events.push('uncork') };
    // The generated client's methods write their request, and answer in a later turn.
    const rpc = {
      recv_FetchResults: () => undefined,
      ...Object.fromEntries(
        ['A', 'B', 'C', 'D'].map((m) => [
          m,
          (_req: unknown, cb: (err: unknown, res: unknown) => void) => {
            events.push(`write ${m}`);
            setImmediate(() => cb(null, m));
          },
        ]),
      ),
    };
    const link = new Link(new EventEmitter() as unknown as HiveClient, rpc, socket);
    expect(await Promise.all([link.call('A', {}), link.call('B', {}), link.call('C', {})])).toEqual(['A', 'B', 'C']);
    expect(await link.call('D', {})).toBe('D');
    expect(events).toEqual(['cork', 'write A', 'write B', 'write C', 'uncork', 'cork', 'write D', 'uncork']);
  });
});
