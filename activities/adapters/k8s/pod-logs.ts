// Log entries of a driver's pods: the driver container's log and each executor's, cut to a line range.
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import type { LogRange } from '../../../domain/driver';
import type { JobLogEntry } from '../../../domain/types';
import { codeOf, type K8sApiError } from './errors';

type Describe = (e: unknown, what: string) => K8sApiError;

async function readLogLines(
  api: CoreV1Api,
  namespace: string,
  pod: V1Pod,
  container: string | undefined,
  describe: Describe,
): Promise<string[]> {
  const name = pod.metadata!.name!;
  try {
    const text = await api.readNamespacedPodLog({ name, namespace, container });
    if (!text) return [];
    return String(text).replace(/\n$/, '').split('\n');
  } catch (e) {
    // 400: the container has not started yet (no log); 404: the pod went away meanwhile.
    const code = codeOf(e);
    if (code === 400 || code === 404) return [];
    throw describe(e, `read the log of pod ${name}`);
  }
}

export interface PodLogRequest {
  api: CoreV1Api;
  namespace: string;
  describe: Describe;
  range: LogRange;
}

/** The log entry of one pod; reads the log only when the range asks for lines. */
export async function podLogEntry(
  r: PodLogRequest,
  pod: V1Pod,
  role: 'driver' | 'executor',
  container: string | undefined,
): Promise<JobLogEntry> {
  const name = pod.metadata!.name!;
  const from = Math.max(0, r.range.from);
  const lines =
    r.range.size > 0
      ? (await readLogLines(r.api, r.namespace, pod, container, r.describe)).slice(from, from + r.range.size)
      : [];
  return {
    name,
    type: 'pod',
    role,
    state: pod.status?.phase ?? 'Unknown',
    from,
    logSize: lines.length,
    fileName: `${name}.log`,
    log: lines,
  };
}
