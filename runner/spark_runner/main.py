"""Start-up, the Temporal worker and shutdown of a runner process.

Lifecycle: read config -> build the SparkSession -> extend sys.path -> build the executor (a SCALA
CODE group's interpreter starts here) -> connect to Temporal (retrying
up to RUNNER_CONNECT_TIMEOUT_SECONDS) -> poll RUNNER_TASK_QUEUE -> signal instanceReady once the
server sees the poll -> serve executions one at a time -> on SIGTERM/SIGINT (or when the parent
spark-submit JVM dies) stop polling, give a running execution GRACEFUL_SHUTDOWN to finish, stop Spark.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import stat
import sys
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import timedelta
from types import FrameType
from typing import Any, TypeVar
from urllib.parse import urlparse

from pyspark import SparkFiles
from pyspark.sql import SparkSession
from temporalio import activity
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client, WorkflowHandle
from temporalio.service import GrpcCompression
from temporalio.worker import PollerBehaviorSimpleMaximum, Worker

from .config import ConfigError, RunnerConfig
from .direct import DirectServer, advertised_host
from .execution import ExecutionResult, Executor
from .jvm import REPL_CLASS_DIR_CONF, JvmSetupError, new_class_dir, remove_class_dir
from .state import BUSY, READY, InstanceState, StateReporter

log = logging.getLogger("spark_runner")

ACTIVITY_NAME = "executeJobInstance"
READY_SIGNAL = "instanceReady"
STATE_SIGNAL = "instanceState"

GRACEFUL_SHUTDOWN = timedelta(seconds=3)
"""How long a running execution may finish after a stop request before it is cancelled."""
READY_WAIT_SECONDS = 10.0
"""Longest wait for the server to list this worker's poll before instanceReady is sent anyway."""
CONNECT_BACKOFF_MAX_SECONDS = 5.0

T = TypeVar("T")
R = TypeVar("R")

EXIT_OK = 0
EXIT_WORKER_FAILED = 1
EXIT_BAD_CONFIG = 2
EXIT_TEMPORAL_UNREACHABLE = 3


class ExecutionThread:
    """The one long-lived thread executions run on. Spark calls block and executions are serial
    (one activity slot); py4j also pins this thread to one JVM thread, so every execution sees
    the same Spark local properties."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="execution")
        self._current: Future[Any] | None = None

    async def run(self, fn: Callable[[T], R], arg: T) -> R:
        self._current = self._pool.submit(fn, arg)
        return await asyncio.wrap_future(self._current)

    def busy(self) -> bool:
        return self._current is not None and not self._current.done()

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


class RunnerActivities:
    """The activity the group's workflows call on this driver's task queue, and the same execution for
    the direct channel: both run on the one execution thread, BUSY while any is running or waiting."""

    def __init__(self, executor: Executor, thread: ExecutionThread, state: StateReporter) -> None:
        self._executor = executor
        self._thread = thread
        self._state = state
        self._in_flight = 0

    @activity.defn(name=ACTIVITY_NAME)
    async def execute_job_instance(self, request: dict[str, Any]) -> ExecutionResult:
        return await self.run(request)

    async def run(self, request: dict[str, Any]) -> ExecutionResult:
        self._in_flight += 1
        self._state.set(BUSY)
        try:
            return await self._thread.run(self._executor.execute, request)
        except asyncio.CancelledError:
            # Without heartbeats only worker shutdown cancels, after GRACEFUL_SHUTDOWN: unblock the
            # thread so the driver can exit. The activity then fails and the caller's retry
            # policy decides; it is not a user error.
            self._cancel_spark_jobs()
            raise
        finally:
            self._in_flight -= 1
            if self._in_flight == 0:
                self._state.set(READY)

    def _cancel_spark_jobs(self) -> None:
        try:
            self._executor.spark.sparkContext.cancelAllJobs()
        except Exception as err:  # the JVM may already be gone
            log.debug("cancelAllJobs failed: %s", err)


def main() -> int:
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("py4j").setLevel(logging.WARNING)  # py4j logs every connection at INFO
    try:
        config = RunnerConfig.from_env()
    except ConfigError as err:
        log.error("cannot start: %s", err)
        return EXIT_BAD_CONFIG
    log.setLevel(config.log_level)

    # Until the event loop takes the signals over, a stop request simply ends the process.
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _exit_during_startup)

    builder = SparkSession.builder
    class_dir = None
    if config.language == "SCALA" and config.group_kind == "CODE":
        # The interpreter's classes must be served to executors, which Spark sets up at its start.
        class_dir = new_class_dir()
        builder = builder.config(REPL_CLASS_DIR_CONF, class_dir)
    spark = builder.getOrCreate()
    thread = ExecutionThread()
    try:
        for entry in extend_sys_path(spark):
            log.debug("sys.path += %s", entry)
        try:
            # Before serving: a SCALA CODE group's interpreter takes seconds to start, and an
            # instance is only announced ready once it can run an execution at once.
            executor = Executor(spark, config.instance_id, config.group_kind, config.language)
        except JvmSetupError as err:
            log.error("cannot start: %s", err)
            return EXIT_BAD_CONFIG
        code = asyncio.run(serve(config, executor, thread))
    finally:
        thread.close()
        try:
            spark.stop()
        except Exception as err:  # the spark-submit JVM may be gone already
            log.debug("spark.stop failed: %s", err)
        if class_dir:
            remove_class_dir(class_dir)
    if thread.busy():
        # User code that survived the cancellation (and Spark's stop) must not keep the driver
        # alive: interpreter exit would join its thread forever.
        log.warning("an execution is still running after shutdown; exiting without it")
        logging.shutdown()
        os._exit(code)
    log.info("stopped (exit code %d)", code)
    return code


def _exit_during_startup(signum: int, _frame: FrameType | None) -> None:
    log.info("received %s during start-up; exiting", signal.Signals(signum).name)
    raise SystemExit(EXIT_OK)


def extend_sys_path(spark: SparkSession) -> list[str]:
    """Makes job modules shipped with --files and --py-files importable; returns what it added."""
    entries = [SparkFiles.getRootDirectory()]
    for uri in spark.sparkContext.getConf().get("spark.submit.pyFiles", "").split(","):
        path = urlparse(uri).path if uri.startswith("file:") else uri
        if not path:
            continue
        # Archives are importable themselves; a .py file through its directory.
        entries.append(path if path.endswith((".zip", ".egg", ".whl")) else os.path.dirname(path))
    added = [entry for entry in dict.fromkeys(entries) if entry and entry not in sys.path]
    sys.path[0:0] = added
    return added


async def serve(config: RunnerConfig, executor: Executor, thread: ExecutionThread) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()

    def request_stop(reason: str) -> None:
        if not stop.is_set():
            log.info("stopping: %s", reason)
            stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, request_stop, signal.Signals(signum).name)
    watch_parent(loop, request_stop)

    identity = f"{config.instance_id}/{os.getpid()}@{socket.gethostname()}"
    client = await connect(config, identity, stop)
    if client is None:
        return EXIT_OK if stop.is_set() else EXIT_TEMPORAL_UNREACHABLE

    group = client.get_workflow_handle(config.group_workflow_id)

    async def send_state(state: InstanceState) -> None:
        await group.signal(STATE_SIGNAL, {"instanceId": config.instance_id, "state": state})

    reporter = StateReporter(send_state)
    activities = RunnerActivities(executor, thread, reporter)
    worker = Worker(
        client,
        task_queue=config.task_queue,
        activities=[activities.execute_job_instance],
        max_concurrent_activities=1,
        # One slot, one poll, always open while idle: a new execution is picked up as soon as the
        # previous one completes, without another driver of the group being starved.
        activity_task_poller_behavior=PollerBehaviorSimpleMaximum(maximum=1),
        graceful_shutdown_timeout=GRACEFUL_SHUTDOWN,
        identity=identity,
    )
    app_id = executor.spark.sparkContext.applicationId
    running = asyncio.create_task(worker.run(), name="worker")
    direct: DirectServer | None = None
    endpoint: str | None = None
    if config.direct_secret:
        direct = DirectServer(config.direct_secret, activities.run)
        port = await direct.start(config.direct_host)
        endpoint = f"{advertised_host(config.direct_host)}:{port}"
        log.info("direct execute channel on %s", endpoint)

    async def signal_group() -> None:
        await announce_ready(client, config, group, identity, app_id, endpoint)
        # Only now: the group workflow must hear of the instance before hearing of its state.
        await reporter.run()

    signalling = asyncio.create_task(signal_group(), name="signals")
    stopped = asyncio.create_task(stop.wait(), name="stop")
    log.info(
        "instance %s (%s) serving %s in namespace %s",
        config.instance_id,
        app_id,
        config.task_queue,
        config.namespace,
    )
    try:
        await asyncio.wait({running, stopped}, return_when=asyncio.FIRST_COMPLETED)
        if running.done():
            log.error("worker failed: %s", running.exception() or "stopped unexpectedly")
            return EXIT_WORKER_FAILED
        if direct is not None:
            await direct.close()
        await worker.shutdown()
        await asyncio.gather(running, return_exceptions=True)
        return EXIT_OK
    finally:
        if direct is not None:
            await direct.close()
        signalling.cancel()
        stopped.cancel()


async def connect(config: RunnerConfig, identity: str, stop: asyncio.Event) -> Client | None:
    """A client, retrying with backoff for up to connect_timeout_seconds; None if it gives up or a
    stop was requested meanwhile."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + config.connect_timeout_seconds
    delay = 0.25
    while not stop.is_set():
        try:
            return await Client.connect(
                config.temporal_address,
                namespace=config.namespace,
                identity=identity,
                connect_timeout=timedelta(seconds=5),
                # Payloads are small and the server is near: latency matters more than bytes.
                grpc_compression=GrpcCompression.NONE,
            )
        except Exception as err:
            remaining = deadline - loop.time()
            if remaining <= 0:
                log.error(
                    "Temporal at %s unreachable for %.0f s; giving up: %s",
                    config.temporal_address,
                    config.connect_timeout_seconds,
                    err,
                )
                return None
            log.warning(
                "Temporal at %s unreachable, retrying in %.2f s: %s",
                config.temporal_address,
                min(delay, remaining),
                err,
            )
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=min(delay, remaining))
            delay = min(delay * 2, CONNECT_BACKOFF_MAX_SECONDS)
    return None


async def announce_ready(
    client: Client,
    config: RunnerConfig,
    group: WorkflowHandle[Any, Any],
    identity: str,
    app_id: str,
    endpoint: str | None = None,
) -> None:
    """Signals instanceReady once the server lists this worker as a poller of the task queue, so
    the group workflow never counts an instance that could not yet take an execution. `endpoint`:
    host:port of the direct execute channel, when there is one."""
    if not await wait_until_polling(client, config, identity):
        log.warning("no poll from this worker seen after %.0f s; announcing anyway", READY_WAIT_SECONDS)
    try:
        ready: dict[str, str] = {"instanceId": config.instance_id, "appId": app_id}
        if endpoint:
            ready["endpoint"] = endpoint
        await group.signal(READY_SIGNAL, ready)
        log.info("signalled %s to %s", READY_SIGNAL, config.group_workflow_id)
    except Exception as err:  # fire-and-forget: the runner serves executions either way
        log.warning("%s not delivered to %s: %s", READY_SIGNAL, config.group_workflow_id, err)


async def wait_until_polling(client: Client, config: RunnerConfig, identity: str) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + READY_WAIT_SECONDS
    request = DescribeTaskQueueRequest(
        namespace=config.namespace,
        task_queue=TaskQueue(name=config.task_queue),
        task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
    )
    while loop.time() < deadline:
        try:
            described = await client.workflow_service.describe_task_queue(request)
            if any(poller.identity == identity for poller in described.pollers):
                return True
        except Exception as err:
            log.debug("describe_task_queue failed: %s", err)
        await asyncio.sleep(0.05)
    return False


def watch_parent(loop: asyncio.AbstractEventLoop, request_stop: Callable[[str], None]) -> None:
    """Stops the runner when the spark-submit JVM that launched it exits.

    spark-submit runs this program as a child with a pipe on stdin that it never writes; when the
    JVM dies (e.g. SIGTERM sent to it rather than to this process) the pipe closes. Without this the
    orphaned runner would keep taking executions with a dead SparkContext.
    """
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        return  # not launched by spark-submit
    try:
        if not stat.S_ISFIFO(os.fstat(0).st_mode):
            return
    except OSError:
        return

    def on_stdin() -> None:
        try:
            data = os.read(0, 4096)
        except OSError:
            data = b""
        if not data:
            loop.remove_reader(0)
            request_stop("parent spark-submit process exited")

    loop.add_reader(0, on_stdin)
