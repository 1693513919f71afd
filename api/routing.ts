// Routes are declared once with their schemas and the role they need: the same declaration checks the
// caller, validates requests and produces the OpenAPI 3.1 document (GET /api/v1/openapi.json), so none of
// them can drift apart.
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { z } from 'zod';
import type { Need } from './auth/roles';
import { isEmptyRequest, readBody } from './body';
import { badRequest } from './errors';
import type { Query } from './list';

export const API_PREFIX = '/api/v1';

type Method = 'get' | 'post' | 'put' | 'delete';
export interface UploadedFile {
  filepath: string;
  originalFilename: string;
  size: number;
}
export type Files = Record<string, UploadedFile[]>;

export interface RouteInput<B> {
  body: B;
  params: Record<string, string>;
  query: Query;
  files: Files;
  ctx: Context;
}

export interface RouteDef<S extends z.ZodType = z.ZodType> {
  method: Method;
  /** Koa path under /api/v1, e.g. `/cluster/:clusterId`. */
  path: string;
  tag: string;
  summary: string;
  /**
   * Who may call it (with AUTH_MODE=on): `public` (no credentials), or the least role. Checked on the route
   * that matched, before its body is read.
   */
  role: Need;
  /** json: application/json; form: multipart/form-data (urlencoded accepted too). */
  /** `optional`: a request without a body (no Content-Type, nothing sent) is read as `{}`. */
  body?: { kind: 'json' | 'form'; schema: S; files?: string[]; optional?: boolean };
  /** Documented query parameters (validated by the handler through list.ts). */
  query?: { name: string; description: string; array?: boolean }[];
  /** Schema of the success body; absent: 200 with an empty body. */
  response?: z.ZodType;
  /** Other media types the success body comes in (chosen by the request's Accept), each with what it holds. */
  alternatives?: Record<string, string>;
  errors?: (400 | 402 | 404 | 409 | 503)[];
  /** Success returns the body; undefined means 200 with an empty body. */
  handler: (input: RouteInput<z.infer<S>>) => Promise<unknown>;
}

export const route = <S extends z.ZodType>(def: RouteDef<S>): RouteDef => def as unknown as RouteDef;

function normaliseFiles(raw: unknown): Files {
  const out: Files = {};
  if (!raw || typeof raw !== 'object') return out;
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
    out[k] = (Array.isArray(v) ? v : [v]) as UploadedFile[];
  }
  return out;
}

/** Form bodies: a repeated field arrives as an array; every form field of the API is a single string. */
function normaliseForm(raw: unknown): Record<string, unknown> {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return {};
  return Object.fromEntries(
    Object.entries(raw as Record<string, unknown>).map(([k, v]) => [k, Array.isArray(v) && v.length === 1 ? v[0] : v]),
  );
}

/** Router options of every app: a path matches only as written (case, trailing slash); other spellings 404. */
export const EXACT_PATHS = { sensitive: true, strict: true } as const;

export interface MountOptions {
  /** The role check of a route (api/auth/authenticate.ts requireRole), mounted first. */
  guard: (need: Need) => Middleware;
  /** Where multipart uploads are written while their request lasts. */
  uploadDir: string;
}

export function mount(router: Router, defs: RouteDef[], opts: MountOptions): void {
  for (const def of defs) {
    const steps: Middleware[] = [opts.guard(def.role)];
    // Routes without a body never read one.
    if (def.body)
      steps.push(
        readBody({
          kind: def.body.kind,
          optional: def.body.optional,
          uploadDir: def.body.kind === 'form' ? opts.uploadDir : undefined,
        }),
      );
    router[def.method](def.path, ...steps, async (ctx: Context) => {
      let body: unknown = undefined;
      if (def.body?.optional && isEmptyRequest(ctx)) body = def.body.schema.parse({});
      else if (def.body) {
        const reqBody = (ctx.request as { body?: unknown }).body;
        const raw = def.body.kind === 'form' ? normaliseForm(reqBody) : (reqBody ?? {});
        if (def.body.kind === 'json' && (raw === null || typeof raw !== 'object' || Array.isArray(raw))) {
          throw badRequest('the JSON body must be an object');
        }
        body = def.body.schema.parse(raw);
      }
      const files = normaliseFiles((ctx.request as { files?: unknown }).files);
      const allowed = new Set(def.body?.files ?? []);
      for (const name of Object.keys(files)) {
        if (!allowed.has(name))
          throw badRequest(
            `unexpected file field '${name}'${allowed.size ? `; files go in ${[...allowed].join(', ')}` : ''}`,
          );
      }
      const result = await def.handler({
        body,
        params: ctx.params as Record<string, string>,
        query: ctx.query as Record<string, string | string[] | undefined>,
        files,
        ctx,
      });
      if (ctx.respond === false || ctx.body !== undefined) return;
      ctx.status = 200;
      if (result === undefined) ctx.body = '';
      else ctx.body = result;
    });
  }
}

const ERROR_TEXT: Record<number, string> = {
  400: 'The body or query cannot be parsed',
  402: 'The request would exceed a configured limit or quota',
  404: 'The resource, or one a field names, does not exist',
  409: 'A field is invalid, or the request conflicts with existing state',
  503: 'A cluster the request needs does not answer now',
};

/** A route's path as the OpenAPI document names it: `/api/v1/job/{jobId}`. */
export const openApiPath = (def: Pick<RouteDef, 'path'>): string =>
  API_PREFIX + def.path.replace(/:([A-Za-z]+)/g, '{$1}');

export function openApiDocument(defs: RouteDef[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const schema = (s: z.ZodType, io: 'input' | 'output') =>
    z.toJSONSchema(s, { io, unrepresentable: 'any', target: 'draft-2020-12' });
  for (const def of defs) {
    const p = openApiPath(def);
    const params = [...def.path.matchAll(/:([A-Za-z]+)/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    const query = (def.query ?? []).map((q) => ({
      name: q.name,
      in: 'query',
      description: q.description,
      schema: q.array ? { type: 'array', items: { type: 'string' } } : { type: 'string' },
      ...(q.array ? { style: 'form', explode: true } : {}),
    }));
    const alternatives = Object.entries(def.alternatives ?? {}).map(([type, description]) => [
      type,
      { schema: { type: 'string', description } },
    ]);
    const responses: Record<string, unknown> = {
      200: def.response
        ? {
            description: 'OK',
            content: {
              'application/json': { schema: schema(def.response, 'output') },
              ...Object.fromEntries(alternatives),
            },
          }
        : { description: 'OK, empty body' },
    };
    for (const code of def.errors ?? []) {
      responses[code] = {
        description: ERROR_TEXT[code],
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      };
    }
    let requestBody: unknown;
    if (def.body) {
      const bodySchema = schema(def.body.schema, 'input') as Record<string, unknown>;
      if (def.body.kind === 'form' && def.body.files?.length) {
        const props = { ...((bodySchema.properties as object) ?? {}) } as Record<string, unknown>;
        for (const f of def.body.files)
          props[f] = { type: 'array', items: { type: 'string', contentMediaType: 'application/octet-stream' } };
        bodySchema.properties = props;
      }
      requestBody = {
        required: !def.body.optional,
        content: { [def.body.kind === 'json' ? 'application/json' : 'multipart/form-data']: { schema: bodySchema } },
      };
    }
    paths[p] ??= {};
    paths[p][def.method] = {
      tags: [def.tag],
      summary: def.summary,
      operationId: `${def.method}${def.path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      parameters: [...params, ...query],
      ...(requestBody ? { requestBody } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Spark orchestrator',
      version: '1.0.0',
      description: 'Single Spark jobs, groups of interactive drivers, schedules, clusters and SQL on Temporal.',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: { Error: { type: 'object', required: ['message'], properties: { message: { type: 'string' } } } },
    },
  };
}

/** Query parameters of every list: page, size, sort, search. */
export const LIST_QUERY = [
  { name: 'page', description: 'page number, from 0 (default 0)' },
  { name: 'size', description: 'page size (default 10, bounded by MAX_PAGE_SIZE)' },
  { name: 'sort', description: 'field,asc|desc; repeatable', array: true },
  { name: 'search', description: 'word filter over names and descriptions' },
];
