// Reading a local driver's log: line ranges for the logs endpoint, and the lines that say why it failed.
import { openOwnFile } from './driver-files';

/** How much of the end of driver.log a failure message is made from. */
const ERROR_TAIL_BYTES = 64 * 1024;

async function readTail(file: string, bytes: number): Promise<string[]> {
  const fh = await openOwnFile(file);
  if (!fh) return [];
  try {
    const { size } = await fh.stat();
    const start = Math.max(0, size - bytes);
    const buf = Buffer.alloc(size - start);
    await fh.read(buf, 0, buf.length, start);
    const lines = buf.toString('utf8').split('\n');
    if (start > 0) lines.shift(); // began mid-line
    return lines.map((l) => l.replace(/\r$/, ''));
  } finally {
    await fh.close();
  }
}

export async function failureSummary(logFile: string): Promise<string | undefined> {
  return summarizeFailure(await readTail(logFile, ERROR_TAIL_BYTES));
}

const LOG4J_LINE = /^\d\d\/\d\d\/\d\d \d\d:\d\d:\d\d /;
const JAVA_EXCEPTION =
  /^(?:Exception in thread "[^"]*" )?((?:[A-Za-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error|Throwable)\b.*)$/;
const MAX_MESSAGE = 1_000;

/**
 * The lines of a driver log that say why it failed: the last Python traceback's exception (with the
 * Java exception Py4J reports under it), else the last Java exception and its root cause, else
 * spark-submit's own error, else the last ERROR line.
 */
export function summarizeFailure(lines: string[]): string | undefined {
  const clip = (s: string) => (s.length > MAX_MESSAGE ? `${s.slice(0, MAX_MESSAGE)}…` : s);
  const tb = findLastIndex(lines, (l) => l.startsWith('Traceback (most recent call last):'));
  if (tb >= 0) {
    for (let i = tb + 1; i < lines.length; i++) {
      const l = lines[i];
      // Frames and source lines are indented; Spark's own log lines may interleave.
      if (l.trim() === '' || /^\s/.test(l) || LOG4J_LINE.test(l)) continue;
      const parts = [l];
      for (let j = i + 1; j < lines.length && parts.length < 3 && lines[j].startsWith(': '); j++)
        parts.push(lines[j].slice(2));
      return clip(parts.join(' '));
    }
  }
  const top = findLastIndex(lines, (l) => JAVA_EXCEPTION.test(l));
  if (top >= 0) {
    let cause: string | undefined;
    for (let i = top + 1; i < lines.length && (/^\s/.test(lines[i]) || lines[i].startsWith('Caused by: ')); i++) {
      if (lines[i].startsWith('Caused by: ')) cause = lines[i].slice('Caused by: '.length);
    }
    const head = JAVA_EXCEPTION.exec(lines[top])![1];
    return clip(cause ? `${head} (caused by ${cause})` : head);
  }
  // spark-submit's own refusals ("Error: Failed to load class …", "Error: Missing application resource.").
  const submitError = findLastIndex(lines, (l) => l.startsWith('Error: '));
  if (submitError >= 0) return clip(lines[submitError].slice('Error: '.length));
  const err = findLastIndex(lines, (l) => / ERROR /.test(l));
  return err >= 0 ? clip(lines[err].replace(LOG4J_LINE, '')) : undefined;
}

/**
 * Lines [from, from+size) of a file, read as a stream that stops once it has them: newlines are
 * counted on raw bytes, and only the wanted lines are decoded.
 */
export async function readLineRange(file: string, from: number, size: number): Promise<string[]> {
  const out: string[] = [];
  if (size <= 0) return out;
  const fh = await openOwnFile(file);
  if (!fh) return out;
  // The stream closes the handle when it ends or is destroyed.
  const stream = fh.createReadStream({ highWaterMark: 1 << 16 });
  let line = 0;
  let current: Buffer[] = [];
  const decode = () => Buffer.concat(current).toString('utf8').replace(/\r$/, '');
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      for (let pos = 0; pos < chunk.length;) {
        const nl = chunk.indexOf(10, pos);
        const end = nl === -1 ? chunk.length : nl;
        if (line >= from) current.push(chunk.subarray(pos, end));
        if (nl === -1) break;
        if (line >= from) {
          out.push(decode());
          current = [];
          if (out.length >= size) return out;
        }
        line++;
        pos = nl + 1;
      }
    }
    // A last line without its newline yet (the driver may still be writing it).
    if (current.some((b) => b.length > 0)) out.push(decode());
    return out;
  } finally {
    stream.destroy();
  }
}

function findLastIndex<T>(a: T[], pred: (v: T) => boolean): number {
  for (let i = a.length - 1; i >= 0; i--) if (pred(a[i])) return i;
  return -1;
}
