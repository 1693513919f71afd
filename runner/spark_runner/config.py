"""Runner configuration, read once from the environment and validated at start-up."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

GroupKind = Literal["JOB", "CODE"]
GROUP_KINDS: tuple[GroupKind, ...] = ("JOB", "CODE")
Language = Literal["PYTHON", "SCALA"]
LANGUAGES: tuple[Language, ...] = ("PYTHON", "SCALA")


class ConfigError(ValueError):
    """The environment does not describe a runnable instance."""


@dataclass(frozen=True)
class RunnerConfig:
    temporal_address: str
    """TEMPORAL_ADDRESS, host:port of the Temporal frontend. Required."""
    namespace: str
    """TEMPORAL_NAMESPACE. Default 'default'."""
    task_queue: str
    """RUNNER_TASK_QUEUE, the group's task queue (e.g. group/<groupId>). Required."""
    group_workflow_id: str
    """RUNNER_GROUP_WORKFLOW_ID, receives instanceReady and instanceState signals. Required."""
    instance_id: str
    """RUNNER_INSTANCE_ID, this driver's job id. Required."""
    group_kind: GroupKind
    """RUNNER_GROUP_KIND, 'JOB' or 'CODE'. Required."""
    language: Language = "PYTHON"
    """RUNNER_LANGUAGE, 'PYTHON' or 'SCALA': what job classes and code are. Default PYTHON, what
    runners served before SCALA groups existed (the service always sets it)."""
    connect_timeout_seconds: float = 60.0
    """RUNNER_CONNECT_TIMEOUT_SECONDS: how long to retry an unreachable server at start. Default 60."""
    log_level: str = "INFO"
    """RUNNER_LOG_LEVEL for the runner's own logger; DEBUG adds one line per execution. Default INFO."""
    direct_secret: str = ""
    """RUNNER_DIRECT_SECRET: the secret callers of the direct execute channel present (set by the cluster
    adapter). Empty: no direct channel, executions come only through Temporal."""
    direct_host: str = "127.0.0.1"
    """RUNNER_DIRECT_HOST: the address the direct channel listens on (0.0.0.0 in a pod). Default loopback."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> RunnerConfig:
        env = os.environ if env is None else env
        required = {
            "TEMPORAL_ADDRESS": env.get("TEMPORAL_ADDRESS", "").strip(),
            "RUNNER_TASK_QUEUE": env.get("RUNNER_TASK_QUEUE", "").strip(),
            "RUNNER_GROUP_WORKFLOW_ID": env.get("RUNNER_GROUP_WORKFLOW_ID", "").strip(),
            "RUNNER_INSTANCE_ID": env.get("RUNNER_INSTANCE_ID", "").strip(),
            "RUNNER_GROUP_KIND": env.get("RUNNER_GROUP_KIND", "").strip().upper(),
        }
        missing = [name for name, value in required.items() if not value]
        if missing:
            raise ConfigError(f"missing environment variables: {', '.join(missing)}")
        kind = required["RUNNER_GROUP_KIND"]
        if kind not in GROUP_KINDS:
            raise ConfigError(f"RUNNER_GROUP_KIND must be JOB or CODE, got {kind!r}")
        language = env.get("RUNNER_LANGUAGE", "").strip().upper() or "PYTHON"
        if language not in LANGUAGES:
            raise ConfigError(f"RUNNER_LANGUAGE must be PYTHON or SCALA, got {language!r}")
        try:
            connect_timeout = float(env.get("RUNNER_CONNECT_TIMEOUT_SECONDS", "60"))
        except ValueError:
            raise ConfigError("RUNNER_CONNECT_TIMEOUT_SECONDS must be a number of seconds") from None
        log_level = env.get("RUNNER_LOG_LEVEL", "").strip().upper() or "INFO"
        if not isinstance(logging.getLevelName(log_level), int):
            raise ConfigError(f"RUNNER_LOG_LEVEL must be DEBUG, INFO, WARNING or ERROR, got {log_level!r}")
        return cls(
            temporal_address=required["TEMPORAL_ADDRESS"],
            namespace=env.get("TEMPORAL_NAMESPACE", "").strip() or "default",
            task_queue=required["RUNNER_TASK_QUEUE"],
            group_workflow_id=required["RUNNER_GROUP_WORKFLOW_ID"],
            instance_id=required["RUNNER_INSTANCE_ID"],
            group_kind=kind,
            language=language,
            connect_timeout_seconds=connect_timeout,
            log_level=log_level,
            direct_secret=env.get("RUNNER_DIRECT_SECRET", "").strip(),
            direct_host=env.get("RUNNER_DIRECT_HOST", "").strip() or "127.0.0.1",
        )
