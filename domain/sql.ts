// SQL resources (docs/api.md, SQL): engines, statements and their results, query history, saved
// statements and notebooks. Shapes follow Ilum's public OpenAPI 1.5.3 (sqlEngine, sqlStatementCreation,
// sqlStatementResult, sqlStatementTemplate, sqlNotebook), written once as zod schemas.
// The engine's ids, states and read model (no zod, workflows import them) are in sql-engine.ts.
import { z } from 'zod';
import { SQL_ENGINES } from './states';

export * from './sql-engine';

// ---- API shapes ----------------------------------------------------------------------------------

const engineType = z.enum(SQL_ENGINES, { message: `must be one of ${SQL_ENGINES.join(', ')}` });

/** 4.25 body (Ilum's sqlEngineCreation, additionalProperties: false). */
export const SqlEngineCreation = z
  .object({
    type: engineType.default('SPARK_SQL'),
    async: z.boolean().default(false),
    force: z.boolean().default(false),
  })
  .strict();
export type SqlEngineCreation = z.infer<typeof SqlEngineCreation>;

/** Ilum's sqlEngine: an element of GET /sql/engine/{clusterId}. */
export const SqlEngineInfo = z.object({
  id: z.string(),
  type: engineType,
  state: z.enum(['RUNNING', 'STARTING', 'FAILED']),
  /** SPARK_SQL engines while RUNNING: the live Spark UI through the API (api/spark-ui/). */
  uiUrl: z.string().optional(),
  /** SPARK_SQL engines while RUNNING: the run in the Spark History Server through the API. */
  historyUrl: z.string().optional(),
});
export type SqlEngineInfo = z.infer<typeof SqlEngineInfo>;

/** 4.26 body (Ilum's sqlStatementCreation). clusterId defaults to the `default` cluster. */
export const SqlStatementCreation = z.object({
  statement: z.string().trim().min(1, 'must not be empty').max(1_000_000),
  clusterId: z.string().trim().min(1).max(200).default('default'),
  maxRows: z.number().int().min(1, 'must be at least 1').default(1000),
  engine: engineType.default('SPARK_SQL'),
});
export type SqlStatementCreation = z.infer<typeof SqlStatementCreation>;

/**
 * Statement states, HiveServer2's operation state names: FINISHED, ERROR (the engine refused or failed
 * the statement), CANCELED (the client went away), TIMEDOUT (past SQL_STATEMENT_TIMEOUT_MS), and
 * RUNNING while it runs (query history and its stream only).
 */
export const SqlStatementState = {
  RUNNING: 'RUNNING',
  FINISHED: 'FINISHED',
  ERROR: 'ERROR',
  CANCELED: 'CANCELED',
  TIMEDOUT: 'TIMEDOUT',
} as const;
export type SqlStatementState = (typeof SqlStatementState)[keyof typeof SqlStatementState];
export const SQL_STATEMENT_STATES = Object.values(SqlStatementState) as [SqlStatementState, ...SqlStatementState[]];

/** Ilum's sqlColumnDescription. `index` is the 1-based position (HiveServer2 and JDBC). */
export const SqlColumn = z.object({
  name: z.string(),
  /** The engine's type name without parameters, upper case: BIGINT, DECIMAL, ARRAY, VARCHAR, … */
  type: z.string(),
  index: z.number().int(),
  /** DECIMAL precision and scale; 0 for other types. */
  precision: z.number().int(),
  scale: z.number().int(),
  comment: z.string().nullable(),
});
export type SqlColumn = z.infer<typeof SqlColumn>;

/** Ilum's sqlOperationInfo. Times are epoch ms. */
export const SqlOperationInfo = z.object({
  state: z.enum(SQL_STATEMENT_STATES),
  creationTime: z.number().int(),
  startTime: z.number().int().optional(),
  completionTime: z.number().int().optional(),
  exception: z.string().optional(),
});
export type SqlOperationInfo = z.infer<typeof SqlOperationInfo>;

/**
 * Ilum's sqlStatementResult. Values are exact: BIGINT beyond ±2^53 and every DECIMAL as strings, dates and
 * timestamps ISO-8601 strings, binary base64, arrays/maps/structs as JSON, NULL as null.
 */
export const SqlStatementResult = z.object({
  info: SqlOperationInfo,
  columns: z.array(SqlColumn),
  rows: z.array(z.array(z.unknown())),
  logs: z.array(z.string()),
});
export type SqlStatementResult = z.infer<typeof SqlStatementResult>;

/** Query history (GET /sql/history): one record per statement, written by the API that ran it. */
export const SqlHistoryEntry = z.object({
  id: z.string(),
  clusterId: z.string(),
  clusterName: z.string(),
  engine: engineType,
  engineId: z.string(),
  statement: z.string(),
  state: z.enum(SQL_STATEMENT_STATES),
  creationTime: z.number().int(),
  startTime: z.number().int().optional(),
  completionTime: z.number().int().optional(),
  /** Rows returned (bounded by maxRows). */
  rows: z.number().int().optional(),
  maxRows: z.number().int(),
  error: z.string().optional(),
});
export type SqlHistoryEntry = z.infer<typeof SqlHistoryEntry>;

/** 4.28 / 4.29 body (Ilum's sqlStatementTemplateData). */
export const SqlSavedData = z.object({
  name: z.string().trim().min(1, 'must not be empty').max(255),
  statement: z.string().trim().min(1, 'must not be empty').max(1_000_000),
  engine: engineType.default('SPARK_SQL'),
  maxRows: z.number().int().min(1).optional(),
});
export type SqlSavedData = z.infer<typeof SqlSavedData>;
/** Ilum's sqlStatementTemplate. */
export const SqlSaved = SqlSavedData.extend({ id: z.string() });
export type SqlSaved = z.infer<typeof SqlSaved>;

export const NOTEBOOK_CELL_LANGUAGES = ['SQL', 'MARKDOWN', 'PYTHON', 'SCALA'] as const;
/** Ilum's sqlNotebookCell. */
export const SqlNotebookCell = z.object({
  id: z.string().trim().min(1).max(200),
  language: z.enum(NOTEBOOK_CELL_LANGUAGES, { message: `must be one of ${NOTEBOOK_CELL_LANGUAGES.join(', ')}` }),
  code: z.string().max(1_000_000),
});
/** 4.31 / 4.32 body (Ilum's sqlNotebookData). */
export const SqlNotebookData = z.object({
  name: z.string().trim().min(1, 'must not be empty').max(255),
  statements: z.array(SqlNotebookCell).max(10_000).default([]),
});
export type SqlNotebookData = z.infer<typeof SqlNotebookData>;
/** Ilum's sqlNotebook. */
export const SqlNotebook = SqlNotebookData.extend({ id: z.string() });
export type SqlNotebook = z.infer<typeof SqlNotebook>;
