"""Configuration from the environment and the connect retry, without Spark or a server."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

from spark_runner.config import ConfigError, RunnerConfig
from spark_runner.main import connect

ENV = {
    "TEMPORAL_ADDRESS": "127.0.0.1:7233",
    "RUNNER_TASK_QUEUE": "group/g1",
    "RUNNER_GROUP_WORKFLOW_ID": "group/g1",
    "RUNNER_INSTANCE_ID": "job-1",
    "RUNNER_GROUP_KIND": "code",
}


def test_config_defaults() -> None:
    config = RunnerConfig.from_env(ENV)

    assert config.namespace == "default"
    assert config.group_kind == "CODE"
    assert config.connect_timeout_seconds == 60.0
    assert config.log_level == "INFO"
    assert config.language == "PYTHON"


def test_config_language() -> None:
    assert RunnerConfig.from_env({**ENV, "RUNNER_LANGUAGE": " scala "}).language == "SCALA"
    with pytest.raises(ConfigError, match="RUNNER_LANGUAGE must be PYTHON or SCALA, got 'JAVA'"):
        RunnerConfig.from_env({**ENV, "RUNNER_LANGUAGE": "java"})


def test_config_names_every_missing_variable() -> None:
    with pytest.raises(ConfigError, match="RUNNER_TASK_QUEUE, RUNNER_INSTANCE_ID"):
        RunnerConfig.from_env({**ENV, "RUNNER_TASK_QUEUE": "", "RUNNER_INSTANCE_ID": " "})


def test_config_rejects_an_unknown_group_kind() -> None:
    with pytest.raises(ConfigError, match="JOB or CODE"):
        RunnerConfig.from_env({**ENV, "RUNNER_GROUP_KIND": "SQL"})


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_connect_retries_until_its_deadline_then_gives_up() -> None:
    config = RunnerConfig.from_env(
        {**ENV, "TEMPORAL_ADDRESS": f"127.0.0.1:{closed_port()}", "RUNNER_CONNECT_TIMEOUT_SECONDS": "1"}
    )
    started = time.monotonic()

    client = asyncio.run(connect(config, "test", asyncio.Event()))

    assert client is None
    assert 1.0 <= time.monotonic() - started < 5.0


def test_connect_stops_retrying_on_a_stop_request() -> None:
    config = RunnerConfig.from_env({**ENV, "TEMPORAL_ADDRESS": f"127.0.0.1:{closed_port()}"})

    async def scenario() -> object:
        stop = asyncio.Event()
        asyncio.get_running_loop().call_later(0.3, stop.set)
        return await connect(config, "test", stop)

    started = time.monotonic()
    assert asyncio.run(scenario()) is None
    assert time.monotonic() - started < 2.0
