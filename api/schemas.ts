// Request field schemas shared by several features (resource shapes: domain/resources.ts; envelopes:
// resources.ts). Handlers and the OpenAPI document use these.
import { z } from 'zod';
import { checkJvmMemory, checkQuantity, FieldError } from '../domain/delimited';

/** Turns a FieldError thrown by a domain parser into a zod issue on that field. */
export const fieldCheck =
  (fn: (field: string, s: string) => unknown, field: string) =>
  (s: string, ctx: z.RefinementCtx): void => {
    try {
      fn(field, s);
    } catch (e) {
      if (e instanceof FieldError) ctx.addIssue({ code: 'custom', message: e.message.replace(`${field}: `, '') });
      else throw e;
    }
  };

export const name = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(128, 'must be at most 128 characters')
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9 ._-]*$/,
    'must start with a letter or digit and contain only letters, digits, space, . _ -',
  );

const intString = (min: number) =>
  z
    .string()
    .trim()
    .regex(/^[0-9]+$/, 'must be a whole number')
    .refine((s) => Number(s) >= min, `must be at least ${min}`);

/** memorySettingsCreation (docs/api.md: Memory settings): every value a string. */
export const MemorySettingsCreation = z
  .object({
    executors: intString(0),
    driverCores: intString(1),
    executorCores: intString(1),
    driverMemory: z.string().trim().superRefine(fieldCheck(checkJvmMemory, 'driverMemory')),
    executorMemory: z.string().trim().superRefine(fieldCheck(checkJvmMemory, 'executorMemory')),
    dynamicAllocation: z.enum(['true', 'false']).default('false'),
    initialExecutors: intString(0),
    minExecutors: intString(0),
    maxExecutors: intString(0),
  })
  .partial()
  .strict();

export const quantity = (field: string) => z.string().trim().superRefine(fieldCheck(checkQuantity, field));
