// Request bodies of the schedule endpoints (4.12, 4.14), and the single-schedule response: domain/resources.ts's
// Schedule plus its next run times.
import { z } from 'zod';
import { Schedule } from '../../domain/resources';
import { name } from '../schemas';
import { memoryFormFields, sparkFormFields } from '../spark-form';

export const SCHEDULE_FILES = ['jars', 'files', 'pyFiles'];

const time = (field: string) =>
  z
    .string()
    .trim()
    .regex(/^[0-9]{1,15}$/, `${field} must be epoch milliseconds`)
    .optional();

export const ScheduleCreateForm = z
  .object({
    name,
    description: z.string().max(4096).optional(),
    cron: z.string().trim().min(1, 'is required').max(256),
    ...sparkFormFields,
    jobClass: z.string().trim().min(1, 'is required').max(512),
    startTime: time('startTime'),
    endTime: time('endTime'),
    maxRetries: z.string().optional(),
  })
  .strict();
export type ScheduleCreateForm = z.infer<typeof ScheduleCreateForm>;

export const ScheduleUpdateForm = z
  .object({
    description: z.string().max(4096).optional(),
    tags: z.string().max(4096).optional(),
    jobConfig: z.string().max(16384).optional(),
    cron: z.string().trim().min(1).max(256).optional(),
    args: z.string().max(16384).optional(),
    jobClass: z.string().trim().min(1).max(512).optional(),
    pyRequirements: z.string().max(4096).optional(),
    packages: z.string().max(4096).optional(),
    startTime: z.string().trim().optional(),
    endTime: z.string().trim().optional(),
    maxRetries: z.string().optional(),
    ...memoryFormFields,
  })
  .strict();
export type ScheduleUpdateForm = z.infer<typeof ScheduleUpdateForm>;

/** GET /schedule/{id}: the schedule and, while it is ENABLED, the next times its Temporal Schedule will fire. */
export const ScheduleDetail = Schedule.extend({
  nextRunTimes: z
    .array(z.number().int())
    .optional()
    .describe('epoch milliseconds of the next runs (at most 5), while ENABLED; absent otherwise'),
});
export type ScheduleDetail = z.infer<typeof ScheduleDetail>;
