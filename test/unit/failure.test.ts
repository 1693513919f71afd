import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { failureMessage } from '../../domain/failure';

describe('failureMessage', () => {
  it("takes an activity failure's cause, which holds what the activity said", () => {
    const cause = ApplicationFailure.nonRetryable("cluster 'x' does not exist", 'ClusterNotFound');
    const err = new ActivityFailure(
      'Activity task failed',
      'launchDriver',
      '1',
      RetryState.NON_RETRYABLE_FAILURE,
      undefined,
      cause,
    );
    expect(failureMessage(err)).toBe("cluster 'x' does not exist");
  });

  it("takes an error's own message when it has no cause", () => {
    expect(failureMessage(ApplicationFailure.create({ message: 'bad cron' }))).toBe('bad cron');
    expect(failureMessage(new Error('boom'))).toBe('boom');
  });

  it('stringifies anything else', () => {
    expect(failureMessage('plain')).toBe('plain');
    expect(failureMessage(42)).toBe('42');
    expect(failureMessage(undefined)).toBe('undefined');
    expect(failureMessage({ cause: { code: 1 } })).toBe('[object Object]');
  });
});
