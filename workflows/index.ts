// Every workflow the worker registers. Workflows import activities with `import type` only.
export { groupWorkflow } from './group';
export { singleJobWorkflow } from './job';
export { jobInstanceWorkflow } from './job-instance';
export { scheduleWorkflow } from './schedule';
export { sqlEngineWorkflow } from './sql-engine';
export { connectServerWorkflow } from './connect-server';
export { deleteGroupWorkflow, deleteJobWorkflow, driverLogsWorkflow } from './ops';
export { driverCleanupWorkflow } from './driver-cleanup';
export { retentionSweepWorkflow } from './retention';
