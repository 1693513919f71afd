// Request bodies of the group endpoints (4.2, 4.4, 4.5, 4.7); response shapes are in domain/resources.ts.
import { z } from 'zod';
import { GROUP_KINDS } from '../../domain/states';
import { name } from '../schemas';
import { memoryFormFields, sparkFormFields } from '../spark-form';

export const GROUP_FILES = ['jars', 'files', 'pyFiles'];

export const GroupCreateForm = z
  .object({
    name,
    description: z.string().max(4096).optional(),
    kind: z.enum(GROUP_KINDS).optional(),
    ...sparkFormFields,
    scale: z.string().optional(),
    autoPause: z.string().optional(),
  })
  .omit({ jobClass: true, args: true })
  .strict();
export type GroupCreateForm = z.infer<typeof GroupCreateForm>;

export const GroupUpdateForm = z
  .object({
    description: z.string().max(4096).optional(),
    tags: z.string().max(4096).optional(),
    jobConfig: z.string().max(16384).optional(),
    pyRequirements: z.string().max(4096).optional(),
    packages: z.string().max(4096).optional(),
    scale: z.string().optional(),
    autoPause: z.string().optional(),
    ...memoryFormFields,
  })
  .strict();
export type GroupUpdateForm = z.infer<typeof GroupUpdateForm>;

export const ExecuteBody = z
  .object({
    type: z.enum(['interactive_job_execute', 'interactive_code_execute']).default('interactive_job_execute'),
    jobClass: z.string().trim().min(1).max(512).optional(),
    code: z.string().max(1_000_000).optional(),
    jobConfig: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();
export type ExecuteBody = z.infer<typeof ExecuteBody>;
