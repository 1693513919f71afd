// A driver's status as its pod shows it.
//
//   launch ─▶ Pending ──▶ Running ──▶ Succeeded                    → PENDING, RUNNING, SUCCEEDED
//                │            └──────▶ Failed                       → FAILED (reason, exit code)
//                ├─ not scheduled (PodScheduled=False) ───────────▶ PENDING, message: Unschedulable: why
//                ├─ ErrImagePull, ImagePullBackOff, CreateContainerConfigError
//                │     within the grace time ────────────────────▶ PENDING, message: the reason
//                │     longer than the grace time ───────────────▶ FAILED
//                └─ InvalidImageName, ErrImageNeverPull ─────────▶ FAILED at once
//   pod not found → MISSING          API server unreachable, 5xx → UNKNOWN (ask again later)
// (MISSING and UNKNOWN come from the adapter's read of the pod, not from a pod.)
import type { V1Pod } from '@kubernetes/client-node';
import { DriverPhase, type DriverStatus } from '../../../domain/driver';
import { stripUndefined } from '../../../domain/memory';
import { DRIVER_CONTAINER, Labels } from './names';

/** Waiting reasons no retry of the kubelet will change: the pod spec itself is wrong. */
const PERMANENT_WAITING_REASONS = new Set(['InvalidImageName', 'ErrImageNeverPull']);
/**
 * Waiting reasons that may pass (a registry briefly down, a secret created a moment later) and that the
 * kubelet retries by itself, so the driver stays PENDING for a while, with the reason shown.
 */
const TRANSIENT_WAITING_REASONS = new Set(['ErrImagePull', 'ImagePullBackOff', 'CreateContainerConfigError']);
/** Default of K8sAdapterOptions.imagePullGraceMs. */
export const DEFAULT_IMAGE_PULL_GRACE_MS = 5 * 60_000;

export interface PodStatusOptions {
  /** Epoch ms of now. Default Date.now(). */
  now?: number;
  /** How long a transient waiting reason keeps a driver PENDING, counted from the pod's creation. */
  imagePullGraceMs?: number;
}

const toMs = (d: Date | string | undefined): number | undefined => {
  if (d === undefined) return undefined;
  const t = d instanceof Date ? d.getTime() : Date.parse(d);
  return Number.isNaN(t) ? undefined : t;
};
const words = (...parts: (string | undefined)[]) => parts.filter(Boolean).join(': ');

/** The scheduler's reason a pod is not placed on a node (PodScheduled=False), in words. */
function unscheduled(pod: V1Pod): string | undefined {
  const c = pod.status?.conditions?.find((x) => x.type === 'PodScheduled' && x.status === 'False');
  return c ? words(c.reason ?? 'Unschedulable', c.message) : undefined;
}

/** The driver's status as the pod shows it. */
export function podStatus(pod: V1Pod, opts: PodStatusOptions = {}): DriverStatus {
  const statuses = pod.status?.containerStatuses ?? [];
  const cs = statuses.find((c) => c.name === DRIVER_CONTAINER) ?? statuses[0];
  const { running, terminated, waiting } = cs?.state ?? {};
  const base = stripUndefined({
    appId: pod.metadata?.labels?.[Labels.SPARK_APP_SELECTOR] || undefined,
    startTime: toMs(running?.startedAt ?? terminated?.startedAt),
    endTime: toMs(terminated?.finishedAt),
  });
  switch (pod.status?.phase) {
    case 'Pending': {
      const reason = waiting?.reason;
      const why = reason ? words(reason, waiting?.message) : undefined;
      if (reason && PERMANENT_WAITING_REASONS.has(reason)) return { ...base, phase: DriverPhase.FAILED, message: why };
      if (reason && TRANSIENT_WAITING_REASONS.has(reason)) {
        const created = toMs(pod.metadata?.creationTimestamp);
        const grace = opts.imagePullGraceMs ?? DEFAULT_IMAGE_PULL_GRACE_MS;
        const waited = created === undefined ? 0 : (opts.now ?? Date.now()) - created;
        if (waited > grace)
          return {
            ...base,
            phase: DriverPhase.FAILED,
            message: `${why} (for more than ${grace / 1000} s)`,
          };
        return { ...base, phase: DriverPhase.PENDING, message: why };
      }
      const message = unscheduled(pod);
      return message ? { ...base, phase: DriverPhase.PENDING, message } : { ...base, phase: DriverPhase.PENDING };
    }
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
