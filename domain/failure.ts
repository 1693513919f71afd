// One way to turn a thrown failure into the words a job's `error` or a client's message carries.
// Pure (no SDK import), so workflows and the API can share it.

/**
 * The message of a failure as a user should read it. Activity and child-workflow failures arrive wrapped
 * (ActivityFailure "Activity task failed"), and the cause holds what the activity said, so the cause's
 * message wins; otherwise the failure's own message; anything else is stringified.
 */
export function failureMessage(err: unknown): string {
  if (typeof err === 'object' && err !== null) {
    const cause = (err as { cause?: unknown }).cause;
    if (typeof cause === 'object' && cause !== null && typeof (cause as { message?: unknown }).message === 'string') {
      return (cause as { message: string }).message;
    }
    if (typeof (err as { message?: unknown }).message === 'string') return (err as { message: string }).message;
  }
  return String(err);
}
