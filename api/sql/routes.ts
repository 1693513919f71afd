// Every SQL route: each feature's table, concatenated. The history stream (`/sql/history/updates`) is
// declared with the other streams (api/streams), which app.ts mounts first.
import type { ApiDeps } from '../deps';
import { sqlEngineRoutes } from './engines/routes';
import { createSqlRuntime } from './execute/runtime';
import { sqlExecuteRoutes } from './execute/routes';
import { sqlHistoryRoutes } from './history/routes';
import { sqlNotebookRoutes } from './notebooks/routes';
import { sqlStatementRoutes } from './statements/routes';

export const sqlRoutes = (deps: ApiDeps) => {
  // Tests that build the app alone get a runtime of their own (startApi passes the one it closes).
  const sql = (deps.sql ??= createSqlRuntime(deps.config, deps.temporal, deps.store));
  return [
    ...sqlEngineRoutes(deps),
    ...sqlExecuteRoutes({ ...deps, sql }),
    ...sqlStatementRoutes(deps),
    ...sqlNotebookRoutes(deps),
    ...sqlHistoryRoutes(deps),
  ];
};
