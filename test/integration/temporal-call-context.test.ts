// The Temporal client's call context without async hooks (lib/temporal.ts, withSyncCallContext), against the
// real Temporal dev server: calls still carry their context (the namespace header the Connection adds to every
// workflow service call, metadata given with withMetadata), and after them no async hook runs in this thread.
// Without the change, the Connection's AsyncLocalStorage stays on after its first call and the last check fails.
import { executionAsyncId } from 'node:async_hooks';
import { InterceptingCall, type Interceptor, type Metadata } from '@grpc/grpc-js';
import { Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { withSyncCallContext } from '../../lib/temporal';

/** Non-zero only while a promise hook runs in this thread (an AsyncLocalStorage that ran, any async hook). */
const asyncIdInPromise = async () => {
  await null;
  return executionAsyncId();
};

const sent: Metadata[] = [];
const capture: Interceptor = (options, nextCall) =>
  new InterceptingCall(nextCall(options), {
    start(metadata, listener, next) {
      sent.push(metadata.clone());
      next(metadata, listener);
    },
  });

let connection: Connection;
beforeAll(async () => {
  connection = withSyncCallContext(
    await Connection.connect({ address: inject('temporalAddress'), interceptors: [capture] }),
  );
});
afterAll(() => connection?.close());

describe('Temporal client call context (lib/temporal.ts)', () => {
  it('carries the namespace header and withMetadata, and leaves no async hook on', async () => {
    // Nothing else in this file's thread turns hooks on: a failure here means the check below means nothing.
    expect(await asyncIdInPromise()).toBe(0);

    sent.length = 0;
    await connection.workflowService.describeNamespace({ namespace: 'default' });
    expect(sent.at(-1)?.get('temporal-namespace')).toEqual(['default']);

    sent.length = 0;
    await connection.withMetadata({ 'x-probe': 'yes' }, () =>
      connection.workflowService.describeNamespace({ namespace: 'default' }),
    );
    const last = sent.at(-1)!;
    expect(last.get('x-probe')).toEqual(['yes']);
    expect(last.get('temporal-namespace')).toEqual(['default']);

    // Nested contexts end with their run: a later call carries neither.
    sent.length = 0;
    await connection.workflowService.getSystemInfo({});
    expect(sent.at(-1)?.get('x-probe')).toEqual([]);

    expect(await asyncIdInPromise()).toBe(0);
  });
});
