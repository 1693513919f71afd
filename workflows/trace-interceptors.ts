// The workflow interceptors of every workflow bundle (worker/worker.ts, scripts/build.mjs, the tests'
// bundles): the Temporal SDK's OpenTelemetry interceptors, but only for workflows that carry a trace.
//
// Those interceptors cost about a third of every workflow task even with tracing off: their modules are set
// up again for each workflow (module state lives per workflow in the sandbox), and each activity, local
// activity and handler gets a span whose promises the SDK's stack-trace hook follows. So a workflow started
// without a trace context (tracing off in the API, or a Temporal Schedule's start) runs without them; one
// started with a trace context, or a traced signal or update, gets them.
import {
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptors,
  type WorkflowInternalsInterceptor,
  type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';

/** The header the SDK's OpenTelemetry interceptors carry a span context in. */
const TRACE_HEADER = '_tracer-data';

type Otel = typeof import('@temporalio/interceptors-opentelemetry/lib/workflow');
interface OtelInterceptors {
  inbound: Required<WorkflowInboundCallsInterceptor>;
  outbound: Required<WorkflowOutboundCallsInterceptor>;
  internals: Required<WorkflowInternalsInterceptor>;
}

// Module state is per workflow: the sandbox gives each workflow its own module instances.
let otel: OtelInterceptors | undefined;
/** Whether this workflow's own calls (activities, children, logs) go through the OpenTelemetry interceptors. */
let traced = false;

/** Loads the OpenTelemetry interceptors on first use (their modules are evaluated only then). */
function load(): OtelInterceptors {
  if (!otel) {
    // A require, not an import: the bundler evaluates the module only when this runs.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const m = require('@temporalio/interceptors-opentelemetry/lib/workflow') as Otel;
    otel = {
      inbound: new m.OpenTelemetryInboundInterceptor() as unknown as OtelInterceptors['inbound'],
      outbound: new m.OpenTelemetryOutboundInterceptor() as unknown as OtelInterceptors['outbound'],
      internals: new m.OpenTelemetryInternalsInterceptor() as unknown as OtelInterceptors['internals'],
    };
  }
  return otel;
}

const hasTrace = (headers: Record<string, unknown>): boolean => headers[TRACE_HEADER] !== undefined;

type In = WorkflowInboundCallsInterceptor;
type Out = WorkflowOutboundCallsInterceptor;

const inbound: In = {
  execute(input, next) {
    traced = hasTrace(input.headers);
    return traced ? load().inbound.execute(input, next) : next(input);
  },
  handleSignal: (input, next) =>
    traced || hasTrace(input.headers) ? load().inbound.handleSignal(input, next) : next(input),
  handleUpdate: (input, next) =>
    traced || hasTrace(input.headers) ? load().inbound.handleUpdate(input, next) : next(input),
  validateUpdate: (input, next) =>
    traced || hasTrace(input.headers) ? load().inbound.validateUpdate(input, next) : next(input),
  handleQuery: (input, next) =>
    traced || hasTrace(input.headers) ? load().inbound.handleQuery(input, next) : next(input),
};

/** Any outbound interceptor method, as the SDK calls it: the call's input and the next step. */
type Step = (input: unknown, next: (input: unknown) => unknown) => unknown;

/** An outbound call through the OpenTelemetry interceptor when this workflow is traced, straight on otherwise. */
const through =
  (k: keyof Out): Step =>
  (input, next) =>
    traced ? (load().outbound[k] as Step)(input, next) : next(input);

const outbound = Object.fromEntries(
  (
    [
      'scheduleActivity',
      'scheduleLocalActivity',
      'startNexusOperation',
      'startChildWorkflowExecution',
      'continueAsNew',
      'signalWorkflow',
      'getLogAttributes',
      'getMetricTags',
    ] as const
  ).map((k) => [k, through(k)]),
) as Out;

const internals: WorkflowInternalsInterceptor = {
  dispose: (input, next) => (otel ? otel.internals.dispose(input, next) : next(input)),
};

export const interceptors = (): WorkflowInterceptors => ({
  inbound: [inbound],
  outbound: [outbound],
  internals: [internals],
});
