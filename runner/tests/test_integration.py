"""The runner as the service runs it: spark-submit'ed against a real Temporal dev server.

Two runners start in parallel (a CODE group and a JOB group), plus one pointed at a closed port.
A stub group workflow records their signals; executions are made by a small caller workflow that
calls `executeJobInstance` by name on a runner's task queue, as the TypeScript workflows do.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
import zipfile
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import pyspark
import pytest
from temporalio import workflow
from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.common import RetryPolicy
from temporalio.worker import Worker

RUNNER = Path(__file__).resolve().parents[1] / "runner.py"
VENV_BIN = Path(sys.executable).parent
TEMPORAL = VENV_BIN / "temporal"
SPARK_SUBMIT = VENV_BIN / "spark-submit"
TEST_QUEUE = "runner-integration-tests"
START_TIMEOUT = 180.0  # spark-submit on a busy two-core machine

T = TypeVar("T")

pytestmark = pytest.mark.skipif(
    not (TEMPORAL.exists() and SPARK_SUBMIT.exists()), reason="needs the venv's temporal CLI and spark-submit"
)


@workflow.defn(sandboxed=False)
class GroupStub:
    """Stands in for the group workflow: records what runners signal."""

    def __init__(self) -> None:
        self.ready: list[dict[str, Any]] = []
        self.states: list[dict[str, Any]] = []

    @workflow.run
    async def run(self) -> None:
        await workflow.wait_condition(lambda: False)

    @workflow.signal(name="instanceReady")
    def instance_ready(self, ready: dict[str, Any]) -> None:
        self.ready.append(ready)

    @workflow.signal(name="instanceState")
    def instance_state(self, state: dict[str, Any]) -> None:
        self.states.append(state)

    @workflow.query
    def signals(self) -> dict[str, list[dict[str, Any]]]:
        return {"ready": self.ready, "states": self.states}


@workflow.defn(sandboxed=False)
class CallRunner:
    """Calls executeJobInstance on a runner's task queue once per request, in order."""

    @workflow.run
    async def run(self, task_queue: str, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        results = []
        for request in requests:
            result = await workflow.execute_activity(
                "executeJobInstance",
                request,
                task_queue=task_queue,
                start_to_close_timeout=timedelta(minutes=2),
                retry_policy=RetryPolicy(maximum_attempts=1),
            )
            results.append(result)
        return results


class Loop:
    """An event loop on a thread, so plain (sync) tests can share one Temporal client and worker."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine: Awaitable[T], timeout: float = 120.0) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)  # type: ignore[arg-type]

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            # The command may hold spaces and parentheses; fields after the last ')' are fixed.
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes.
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.1)


@dataclass
class RunnerProcess:
    name: str
    kind: str
    task_queue: str
    group_id: str
    process: subprocess.Popen[bytes]
    log: Path
    group: WorkflowHandle[Any, Any] | None = None

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def python_pid(self) -> int:
        """The Python driver: spark-submit's JVM runs runner.py as its child."""
        pids = [pid for pid in children(self.process.pid) if "runner.py" in _cmdline(pid)]
        assert len(pids) == 1, f"python driver of {self.name} not found among children of {self.process.pid}"
        return pids[0]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@dataclass
class Environment:
    loop: Loop
    client: Client
    runners: dict[str, RunnerProcess]

    def execute(self, runner: RunnerProcess, *requests: dict[str, Any]) -> list[dict[str, Any]]:
        return self.loop.run(
            self.client.execute_workflow(
                CallRunner.run,
                args=[runner.task_queue, list(requests)],
                id=f"call-{uuid.uuid4()}",
                task_queue=TEST_QUEUE,
            )
        )

    def signals(self, runner: RunnerProcess) -> dict[str, list[dict[str, Any]]]:
        assert runner.group is not None
        return self.loop.run(runner.group.query(GroupStub.signals))


def job(runner: RunnerProcess, job_class: str, config: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "jobInstanceId": f"ji-{uuid.uuid4().hex[:8]}",
        "groupId": runner.group_id,
        "type": "interactive_job_execute",
        "jobClass": job_class,
        "jobConfig": config or {},
    }


def code(runner: RunnerProcess, source: str) -> dict[str, Any]:
    return {
        "jobInstanceId": f"ji-{uuid.uuid4().hex[:8]}",
        "groupId": runner.group_id,
        "type": "interactive_code_execute",
        "code": source,
        "jobConfig": {},
    }


def write_jobs(directory: Path) -> dict[str, Path]:
    """Job code shipped the three ways a group ships it: a .py and a .zip in --py-files, a .py in --files."""
    py_files = directory / "py_files"
    py_files.mkdir()
    (py_files / "it_jobs.py").write_text(
        """
from random import random
from operator import add
import time

from ilum.api import IlumJob


class SparkPiInteractiveExample(IlumJob):

    def run(self, spark, config):
        partitions = int(config.get('partitions', '5'))
        n = 100000 * partitions

        def f(_: int) -> float:
            x = random() * 2 - 1
            y = random() * 2 - 1
            return 1 if x ** 2 + y ** 2 <= 1 else 0

        count = spark.sparkContext.parallelize(range(1, n + 1), partitions).map(f).reduce(add)

        return "Pi is roughly %f" % (4.0 * count / n)


class Echo(IlumJob):
    def run(self, spark, config):
        return config.get("value")


class Nothing(IlumJob):
    def run(self, spark, config):
        return None


class Failing(IlumJob):
    def run(self, spark, config):
        raise RuntimeError("job failed on purpose")


class Sleeper(IlumJob):
    def run(self, spark, config):
        time.sleep(float(config["seconds"]))  # ignores Spark's stop: only exiting ends it
        return "woke up"
"""
    )
    archive = directory / "it_package.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("it_package/__init__.py", "")
        zipped.writestr("it_package/nested/__init__.py", "")
        zipped.writestr(
            "it_package/nested/jobs.py",
            "class AppName:\n    def run(self, spark, config):\n        return spark.sparkContext.appName\n",
        )
    files = directory / "files"
    files.mkdir()
    (files / "it_file_job.py").write_text(
        "class FromFiles:\n    def run(self, spark, config):\n        return 'shipped with --files'\n"
    )
    return {"py": py_files / "it_jobs.py", "zip": archive, "file": files / "it_file_job.py"}


def spark_submit(
    name: str,
    kind: str,
    temporal_address: str,
    jobs: dict[str, Path],
    log: Path,
    extra_env: dict[str, str] | None = None,
) -> RunnerProcess:
    group_id = f"{name}-{uuid.uuid4().hex[:6]}"
    task_queue = f"group/{group_id}"
    env = {
        **os.environ,
        "SPARK_HOME": str(Path(pyspark.__file__).parent),
        "PYSPARK_PYTHON": sys.executable,
        "TEMPORAL_ADDRESS": temporal_address,
        "TEMPORAL_NAMESPACE": "default",
        "RUNNER_TASK_QUEUE": task_queue,
        "RUNNER_GROUP_WORKFLOW_ID": task_queue,
        "RUNNER_INSTANCE_ID": f"instance-{name}",
        "RUNNER_GROUP_KIND": kind,
        "RUNNER_LOG_LEVEL": "DEBUG",
        **(extra_env or {}),
    }
    command = [
        str(SPARK_SUBMIT),
        "--master", "local[2]",
        "--name", f"runner-it-{name}",
        "--conf", "spark.ui.enabled=false",
        "--conf", "spark.driver.memory=512m",
        "--py-files", f"{jobs['py']},{jobs['zip']}",
        "--files", str(jobs["file"]),
        str(RUNNER),
    ]  # fmt: skip
    with log.open("wb") as out:
        # Own session: the test signals exactly the processes it means to, and cleans them all up.
        process = subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    return RunnerProcess(name, kind, task_queue, group_id, process, log)


async def connect_when_up(address: str, timeout: float = 60.0) -> Client:
    deadline = time.monotonic() + timeout
    while True:
        try:
            return await Client.connect(address)
        except RuntimeError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Environment]:
    directory = tmp_path_factory.mktemp("integration")
    port = free_port()
    address = f"127.0.0.1:{port}"
    server_log = (directory / "temporal.log").open("wb")
    server = subprocess.Popen(
        [str(TEMPORAL), "server", "start-dev", "--headless", "--ip", "127.0.0.1",
         "--port", str(port), "--ui-port", str(free_port()), "--log-level", "error"],
        stdout=server_log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    jobs = write_jobs(directory)
    # Spark starts slowly: launch every runner now, in parallel with the server's start.
    runners = {
        "code": spark_submit("code", "CODE", address, jobs, directory / "runner-code.log"),
        "job": spark_submit("job", "JOB", address, jobs, directory / "runner-job.log"),
        "unreachable": spark_submit(
            "unreachable",
            "JOB",
            f"127.0.0.1:{free_port()}",
            jobs,
            directory / "runner-unreachable.log",
            {"RUNNER_CONNECT_TIMEOUT_SECONDS": "2"},
        ),
        # A SCALA driver launched without the runner's jar (the service adds it with --jars).
        "scala-no-jar": spark_submit(
            "scala-no-jar",
            "JOB",
            address,
            jobs,
            directory / "runner-scala-no-jar.log",
            {"RUNNER_LANGUAGE": "SCALA"},
        ),
    }
    loop = Loop()
    try:
        client = loop.run(connect_when_up(address))
        for runner in runners.values():
            runner.group = loop.run(
                client.start_workflow(GroupStub.run, id=runner.task_queue, task_queue=TEST_QUEUE)
            )
        worker = Worker(client, task_queue=TEST_QUEUE, workflows=[GroupStub, CallRunner])
        worker_task = asyncio.run_coroutine_threadsafe(worker.run(), loop.loop)
        yield Environment(loop, client, runners)
        loop.run(worker.shutdown())
        worker_task.result(10)
    finally:
        for runner in runners.values():
            if runner.process.poll() is None:
                os.killpg(runner.process.pid, signal.SIGKILL)
                runner.process.wait(10)
        loop.close()
        server.terminate()
        server.wait(10)
        server_log.close()


def ready(env: Environment, name: str) -> RunnerProcess:
    runner = env.runners[name]

    def announced() -> bool:
        assert runner.process.poll() is None, f"runner exited early:\n{runner.output()[-4000:]}"
        return bool(env.signals(runner)["ready"])

    wait_until(announced, START_TIMEOUT, f"instanceReady from the {name} runner")
    return runner


def test_runner_announces_itself_once_polling(env: Environment) -> None:
    runner = ready(env, "code")

    [announcement] = env.signals(runner)["ready"]
    assert announcement["instanceId"] == "instance-code"
    assert announcement["appId"].startswith("local-")


def test_job_classes_shipped_as_py_files_and_files(env: Environment) -> None:
    runner = ready(env, "code")

    pi, echo, nothing, from_zip, from_files = env.execute(
        runner,
        job(runner, "it_jobs.SparkPiInteractiveExample", {"partitions": "2"}),
        job(runner, "it_jobs.Echo", {"value": "hello", "password": "never logged"}),
        job(runner, "it_jobs.Nothing"),
        job(runner, "it_package.nested.jobs.AppName"),
        job(runner, "it_file_job.FromFiles"),
    )

    assert pi["error"] is None and pi["result"].startswith("Pi is roughly 3.1")
    assert pi["instanceId"] == "instance-code"
    assert pi["startTime"] <= pi["endTime"]
    assert echo == {**echo, "result": "hello", "error": None}
    assert nothing["result"] is None and nothing["error"] is None
    assert from_zip["result"] == "runner-it-code"  # appName comes from spark-submit
    assert from_files["result"] == "shipped with --files"
    assert "never logged" not in runner.output()


def test_user_errors_come_back_as_results(env: Environment) -> None:
    runner = ready(env, "code")

    failing, unknown_module, unknown_class, still_fine = env.execute(
        runner,
        job(runner, "it_jobs.Failing"),
        job(runner, "missing_module.Job"),
        job(runner, "it_jobs.Missing"),
        job(runner, "it_jobs.Echo", {"value": "after errors"}),
    )

    assert failing["result"] is None
    assert failing["error"]["message"] == "RuntimeError: job failed on purpose"
    assert 'raise RuntimeError("job failed on purpose")' in failing["error"]["stackTrace"]
    assert unknown_module["error"]["message"] == "ModuleNotFoundError: No module named 'missing_module'"
    assert unknown_class["error"]["message"] == "AttributeError: module 'it_jobs' has no attribute 'Missing'"
    assert still_fine["result"] == "after errors"


def test_code_scope_persists_across_executions(env: Environment) -> None:
    runner = ready(env, "code")

    defined, used, printed, failed, on_executors = env.execute(
        runner,
        code(runner, "base = 40\ndef plus(v):\n    return v + base"),
        code(runner, "plus(2)"),
        code(runner, "print(spark.range(3).count())"),
        code(runner, "undefined_name"),
        code(runner, "sc.parallelize([1, 2]).map(plus).collect()"),
    )

    assert defined["result"] is None and defined["error"] is None
    assert used["result"] == "42"
    assert printed["result"] == "3\n"
    assert failed["error"]["message"] == "NameError: name 'undefined_name' is not defined"
    assert on_executors["result"] == "[41, 42]"


def test_state_signals_end_on_ready(env: Environment) -> None:
    runner = ready(env, "code")
    env.execute(runner, job(runner, "it_jobs.SparkPiInteractiveExample", {"partitions": "4"}))

    def settled() -> bool:
        states = env.signals(runner)["states"]
        return bool(states) and states[-1]["state"] == "READY"

    wait_until(settled, 10, "a final READY state")
    states = env.signals(runner)["states"]
    assert {"instanceId": "instance-code", "state": "BUSY"} in states  # Spark Pi is long enough to be seen
    assert all(state["instanceId"] == "instance-code" for state in states)


def test_a_job_group_refuses_code(env: Environment) -> None:
    runner = ready(env, "job")

    [refused] = env.execute(runner, code(runner, "1 + 1"))

    assert refused["error"]["message"] == (
        "ValueError: execution type 'interactive_code_execute' is not supported by a JOB group"
    )


def test_unreachable_server_fails_start_up_with_a_clear_message(env: Environment) -> None:
    runner = env.runners["unreachable"]

    exit_code = runner.process.wait(START_TIMEOUT)

    assert exit_code != 0
    assert "Temporal at 127.0.0.1:" in runner.output() and "unreachable for 2 s; giving up" in runner.output()


def test_scala_driver_without_the_runners_jar_exits_with_a_clear_message(env: Environment) -> None:
    runner = env.runners["scala-no-jar"]

    exit_code = runner.process.wait(START_TIMEOUT)

    assert exit_code == 2, runner.output()[-4000:]
    assert "cannot start: sparkrunner.JobRunner is not on the driver's classpath" in runner.output()


def start_call(env: Environment, runner: RunnerProcess, request: dict[str, Any]) -> WorkflowHandle[Any, Any]:
    return env.loop.run(
        env.client.start_workflow(
            CallRunner.run,
            args=[runner.task_queue, [request]],
            id=f"call-{uuid.uuid4()}",
            task_queue=TEST_QUEUE,
        )
    )


def wait_busy(env: Environment, runner: RunnerProcess) -> None:
    def busy() -> bool:
        states = env.signals(runner)["states"]
        return bool(states) and states[-1]["state"] == "BUSY"

    wait_until(busy, 30, f"the {runner.name} runner to report BUSY")


def test_sigterm_lets_the_running_execution_finish_then_stops_cleanly(env: Environment) -> None:
    runner = ready(env, "code")
    python = runner.python_pid()
    call = start_call(env, runner, job(runner, "it_jobs.Sleeper", {"seconds": 1.5}))
    wait_busy(env, runner)

    os.kill(python, signal.SIGTERM)

    [finished] = env.loop.run(call.result(), timeout=30)
    assert finished["result"] == "woke up"  # within the graceful shutdown time
    assert runner.process.wait(60) == 0  # spark-submit exits with the driver's code
    output = runner.output()
    assert "stopping: SIGTERM" in output and "spark_runner: stopped (exit code 0)" in output
    assert "Traceback" not in output.split("stopping: SIGTERM", 1)[1]


def test_runner_exits_when_spark_submit_dies_mid_execution(env: Environment) -> None:
    """SIGTERM to the JVM alone stops Spark under the runner. The runner must not linger as an
    orphan taking executions, even while user code that ignores Spark's stop keeps running."""
    runner = ready(env, "job")
    python = runner.python_pid()
    call = start_call(env, runner, job(runner, "it_jobs.Sleeper", {"seconds": 120}))
    wait_busy(env, runner)

    os.kill(runner.process.pid, signal.SIGTERM)

    wait_until(lambda: not alive(python), 30, "the orphaned runner to exit")
    with pytest.raises(WorkflowFailureError):  # the execution is lost to the shutdown, not reported as done
        env.loop.run(call.result(), timeout=30)
