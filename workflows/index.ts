// Every workflow the worker registers. Workflows import activities with `import type` only.
export { singleJobWorkflow } from './job';
export { deleteJobWorkflow, driverLogsWorkflow } from './ops';
