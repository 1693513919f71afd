// The parts of hpack.js (RFC 7541) that api/connect/h2.ts uses: its low-level decoder and header table.
declare module 'hpack.js' {
  interface Decoder {
    push(chunk: Buffer): void;
    isEmpty(): boolean;
    decodeBit(): number;
    decodeInt(): number;
    decodeStr(): number[];
  }
  interface Entry {
    name: string;
    value: string;
  }
  interface Table {
    lookup(index: number): Entry | undefined;
    add(name: string, value: string, nameSize: number, valueSize: number): void;
    updateSize(size: number): void;
  }
  const hpack: {
    decoder: { create(): Decoder };
    table: { create(options: { maxSize: number }): Table };
    utils: { stringify(bytes: number[]): string };
  };
  export default hpack;
}
