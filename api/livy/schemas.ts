// Request bodies of the Livy API (Livy's CreateInteractiveRequest, CreateBatchRequest, ExecuteRequest), and
// how their Spark settings become the main API's form fields. Unknown fields are ignored, as Livy does.
import { z } from 'zod';
import { badRequest } from '../errors';
import { SESSION_KINDS, STATEMENT_KINDS } from './shapes';

const refs = z.array(z.string().min(1).max(4096)).max(100).optional();
const count = (min: number) => z.number().int().min(min).max(100_000).optional();

/** Settings sessions and batches share (Livy's common request fields). */
const common = {
  proxyUser: z.string().max(256).nullish(),
  jars: refs,
  pyFiles: refs,
  files: refs,
  archives: z.array(z.string()).max(0, 'archives are not supported by this server').optional(),
  driverMemory: z.string().max(32).optional(),
  driverCores: count(1),
  executorMemory: z.string().max(32).optional(),
  executorCores: count(1),
  numExecutors: count(0),
  queue: z.string().max(256).nullish(),
  name: z.string().max(128).nullish(),
  conf: z.record(z.string().max(512), z.union([z.string().max(16384), z.number(), z.boolean()])).optional(),
  /** Ours: the cluster to run on (default `default`). */
  clusterName: z.string().max(128).optional(),
};

export const SessionCreate = z.object({
  kind: z
    .enum(Object.keys(SESSION_KINDS) as [keyof typeof SESSION_KINDS], {
      error: `must be one of ${Object.keys(SESSION_KINDS).join(', ')}`,
    })
    .optional(),
  heartbeatTimeoutInSecond: z.number().int().optional(),
  ttl: z.string().nullish(),
  ...common,
});
export type SessionCreate = z.infer<typeof SessionCreate>;

export const BatchCreate = z.object({
  file: z.string().min(1).max(4096),
  className: z.string().min(1).max(512).nullish(),
  args: z.array(z.string().max(16384)).max(1000).optional(),
  ...common,
});
export type BatchCreate = z.infer<typeof BatchCreate>;

export const StatementCreate = z.object({
  code: z.string().max(1_000_000),
  kind: z.enum(STATEMENT_KINDS, { error: `must be one of ${STATEMENT_KINDS.join(', ')}` }).nullish(),
});
export type StatementCreate = z.infer<typeof StatementCreate>;

/** `;` separates the main API's delimited fields, so a value holding one cannot be passed on. */
function joined(field: string, values: string[]): string {
  const bad = values.find((v) => v.includes(';') || v.includes('\n'));
  if (bad !== undefined)
    throw badRequest(`${field}: '${bad}' holds ';' or a new line, which this server cannot pass on`);
  return values.join(';');
}

/** The main API's form fields (spark-form.ts) for a Livy request's Spark settings. */
export function sparkFormOf(body: z.infer<z.ZodObject<typeof common>>): Record<string, string | undefined> {
  const conf = Object.entries(body.conf ?? {}).map(([k, v]) => `${k}=${String(v)}`);
  const str = (n: number | undefined) => (n === undefined ? undefined : String(n));
  return {
    clusterName: body.clusterName,
    jobConfig: conf.length ? joined('conf', conf) : undefined,
    driverMemory: body.driverMemory,
    driverCores: str(body.driverCores),
    executorMemory: body.executorMemory,
    executorCores: str(body.executorCores),
    executors: str(body.numExecutors),
  };
}

export const argsField = (args: string[] | undefined) => (args?.length ? joined('args', args) : undefined);
