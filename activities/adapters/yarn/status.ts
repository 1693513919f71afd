// A YARN application report as a driver's status: the phase from its state and final status, the reason and
// exit code from its diagnostics.
import { DriverPhase, type DriverStatus } from '../../../domain/driver';
import type { YarnApp } from './rest';

/** The report's state as a driver phase; the reason from the diagnostics. */
export function toStatus(app: YarnApp): DriverStatus {
  const base = {
    appId: app.id,
    startTime: app.startedTime || undefined,
    endTime: app.finishedTime || undefined,
  };
  const why = app.diagnostics?.trim() || undefined;
  switch (app.state) {
    case 'RUNNING':
      return { ...base, phase: DriverPhase.RUNNING };
    case 'FINISHED':
      return app.finalStatus === 'SUCCEEDED'
        ? { ...base, phase: DriverPhase.SUCCEEDED, exitCode: 0 }
        : {
            ...base,
            phase: DriverPhase.FAILED,
            exitCode: exitCodeOf(why) ?? 1,
            message: why ?? `application ${app.id} ended ${app.finalStatus}`,
          };
    case 'FAILED':
      return {
        ...base,
        phase: DriverPhase.FAILED,
        exitCode: exitCodeOf(why) ?? 1,
        message: why ?? `application ${app.id} FAILED`,
      };
    case 'KILLED':
      return { ...base, phase: DriverPhase.FAILED, exitCode: 143, message: why ?? `application ${app.id} was killed` };
    default:
      // NEW, NEW_SAVING, SUBMITTED, ACCEPTED: waiting for the scheduler (the queue's capacity) or the AM.
      return { ...base, phase: DriverPhase.PENDING, message: why };
  }
}

const exitCodeOf = (diagnostics: string | undefined): number | undefined => {
  const m = /exit(?:Code| code| status|ed with status)[:=]?\s*(-?\d+)/i.exec(diagnostics ?? '');
  return m ? Number(m[1]) : undefined;
};
