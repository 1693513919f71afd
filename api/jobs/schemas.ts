// Request body of a single job's submit (4.19); the response shape is domain/resources.ts's Job.
import { z } from 'zod';
import { name } from '../schemas';
import { sparkFormFields } from '../spark-form';

export const JobSubmitForm = z
  .object({
    name,
    ...sparkFormFields,
    maxRetries: z.string().optional(),
  })
  .strict();
export type JobSubmitForm = z.infer<typeof JobSubmitForm>;
