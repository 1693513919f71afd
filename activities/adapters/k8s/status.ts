// A driver's status as its pod shows it.
//
//   launch ─▶ Pending ──▶ Running ──▶ Succeeded                    → PENDING, RUNNING, SUCCEEDED
//                │            └──────▶ Failed                       → FAILED (reason, exit code)
//                └─ image pull / container config error ─────────▶ FAILED (waiting reason)
//   pod not found → MISSING          API server unreachable, 5xx → UNKNOWN (ask again later)
// (MISSING and UNKNOWN come from the adapter's read of the pod, not from a pod.)
import type { V1Pod } from '@kubernetes/client-node';
import { DriverPhase, type DriverStatus } from '../../../domain/driver';
import { stripUndefined } from '../../../domain/memory';
import { DRIVER_CONTAINER, Labels } from './names';

/** Waiting reasons after which a pending driver will not start without someone changing something. */
const FATAL_WAITING_REASONS = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'CreateContainerConfigError',
]);

const toMs = (d: Date | string | undefined): number | undefined => {
  if (d === undefined) return undefined;
  const t = d instanceof Date ? d.getTime() : Date.parse(d);
  return Number.isNaN(t) ? undefined : t;
};
const words = (...parts: (string | undefined)[]) => parts.filter(Boolean).join(': ');

/** The driver's status as the pod shows it. */
export function podStatus(pod: V1Pod): DriverStatus {
  const statuses = pod.status?.containerStatuses ?? [];
  const cs = statuses.find((c) => c.name === DRIVER_CONTAINER) ?? statuses[0];
  const { running, terminated, waiting } = cs?.state ?? {};
  const base = stripUndefined({
    appId: pod.metadata?.labels?.[Labels.SPARK_APP_SELECTOR] || undefined,
    startTime: toMs(running?.startedAt ?? terminated?.startedAt),
    endTime: toMs(terminated?.finishedAt),
  });
  switch (pod.status?.phase) {
    case 'Pending':
      if (waiting?.reason && FATAL_WAITING_REASONS.has(waiting.reason)) {
        return { ...base, phase: DriverPhase.FAILED, message: words(waiting.reason, waiting.message) };
      }
      return { ...base, phase: DriverPhase.PENDING };
    case 'Running':
      return { ...base, phase: DriverPhase.RUNNING };
    case 'Succeeded':
      return { ...base, phase: DriverPhase.SUCCEEDED, exitCode: terminated?.exitCode ?? 0 };
    case 'Failed': {
      const why = terminated
        ? `${words(terminated.reason ?? 'Error', terminated.message?.trim())} (exit code ${terminated.exitCode})`
        : words(pod.status?.reason, pod.status?.message) || 'driver pod failed';
      return stripUndefined({ ...base, phase: DriverPhase.FAILED, message: why, exitCode: terminated?.exitCode });
    }
    default:
      return {
        ...base,
        phase: DriverPhase.UNKNOWN,
        message: `driver pod ${pod.metadata?.name} is in phase ${pod.status?.phase ?? '(none)'}`,
      };
  }
}
