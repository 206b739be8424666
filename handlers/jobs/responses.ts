/** Answers of the jobs routes. */
import * as z from 'zod';
import { job } from './contract';

export const jobAnswer = z.strictObject({ job });
export const jobListAnswer = z.strictObject({
  jobs: z.array(job),
  /** the cursor of the next page (`before=`), null on the last */
  next: z.string().nullable(),
});
/** The answer of a long route asked with `Prefer: respond-async` (202, Location: the job). */
export const jobAcceptedAnswer = jobAnswer;
