// The SQL protocol clients by engine type, and the session pool the API runs statements through.
import type { SqlEngine } from '../../domain/states';
import { hiveProtocol } from './hive';
import { trinoProtocol } from './trino';
import type { SqlProtocol } from './types';

export const protocols: Record<SqlEngine, SqlProtocol> = { SPARK_SQL: hiveProtocol, TRINO: trinoProtocol };

export { createSqlPool, type SqlPool, type SqlPoolOptions } from './pool';
export type { RowSink, RunOptions, SqlConnection, SqlProtocol, StatementOutcome } from './types';
