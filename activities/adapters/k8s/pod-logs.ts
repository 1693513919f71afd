// Log entries of a driver's pods: the driver container's log and each executor's, cut to a line range.
// The API server is asked for at most LOG_READ_LIMIT_BYTES of a log (limitBytes), so a huge log never
// fills the worker's memory; a log longer than that keeps its start and, after a marker line, its last
// lines (tailLines), which is where a failure's reason is.
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import type { LogRange } from '../../../domain/driver';
import type { JobLogEntry } from '../../../domain/types';
import { codeOf, K8sApiError } from './errors';

type Describe = (e: unknown, what: string) => K8sApiError;

/** Most bytes read from the start of one pod's log. */
export const LOG_READ_LIMIT_BYTES = 8 * 1024 * 1024;
/** Lines read from the end of a log longer than LOG_READ_LIMIT_BYTES (at most a quarter of that in bytes). */
export const LOG_TAIL_LINES = 2000;

const toLines = (text: string | undefined): string[] => (text ? String(text).replace(/\n$/, '').split('\n') : []);

export interface PodLogSource {
  api: CoreV1Api;
  namespace: string;
  describe: Describe;
}

/** The lines of a pod's log, bounded as the header says; none while the container has not started. */
export async function readPodLog(
  s: PodLogSource,
  pod: V1Pod,
  container: string | undefined,
  limitBytes = LOG_READ_LIMIT_BYTES,
): Promise<string[]> {
  const name = pod.metadata!.name!;
  const read = (q: { limitBytes: number; tailLines?: number }) =>
    s.api.readNamespacedPodLog({ name, namespace: s.namespace, container, ...q });
  try {
    const head = String((await read({ limitBytes })) ?? '');
    if (Buffer.byteLength(head) < limitBytes) return toLines(head);
    // Cut: keep whole lines of the start, then the end.
    const start = toLines(head.slice(0, head.lastIndexOf('\n') + 1));
    const tail = toLines(
      String((await read({ tailLines: LOG_TAIL_LINES, limitBytes: Math.ceil(limitBytes / 4) })) ?? ''),
    );
    return [...start, `... (log cut: over ${limitBytes} bytes; its last ${tail.length} lines follow)`, ...tail];
  } catch (e) {
    // 400: the container has not started yet (no log); 404: the pod went away meanwhile. (A pod not bound
    // to a node yet answers 200 with an empty body: transport.ts.)
    const code = codeOf(e);
    if (code === 400 || code === 404) return [];
    throw s.describe(e, `read the log of pod ${name}`);
  }
}

/** A log entry of lines [from, from + size) of a pod's log. */
export function logEntry(
  name: string,
  role: 'driver' | 'executor',
  state: string,
  all: string[],
  range: LogRange,
): JobLogEntry {
  const from = Math.max(0, range.from);
  const lines = range.size > 0 ? all.slice(from, from + range.size) : [];
  return { name, type: 'pod', role, state, from, logSize: lines.length, fileName: `${name}.log`, log: lines };
}

export interface PodLogRequest extends PodLogSource {
  range: LogRange;
}

/**
 * The lines of a pod's log, or one line saying why it cannot be read when the API server answered but
 * would not give it (its kubelet unreachable, RBAC without pods/log): one pod's log never hides the others'.
 * An API server that does not answer throws.
 */
export async function podLogOrWhy(s: PodLogSource, pod: V1Pod, container: string | undefined): Promise<string[]> {
  try {
    return await readPodLog(s, pod, container);
  } catch (e) {
    if (e instanceof K8sApiError && e.code !== undefined) return [`(log not readable: ${e.message})`];
    throw e;
  }
}

/** The log entry of one pod; reads the log only when the range asks for lines. */
export async function podLogEntry(
  r: PodLogRequest,
  pod: V1Pod,
  role: 'driver' | 'executor',
  container: string | undefined,
): Promise<JobLogEntry> {
  const all = r.range.size > 0 ? await podLogOrWhy(r, pod, container) : [];
  return logEntry(pod.metadata!.name!, role, pod.status?.phase ?? 'Unknown', all, r.range);
}
