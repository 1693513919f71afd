"""The JVM side of SCALA groups, called through py4j: job classes implementing `cloud.ilum.job.Job`
and a Scala interpreter, both inside the driver's JVM.

The work is done by the helper classes of runner/jvm (package `sparkrunner`), which scripts/setup.sh
compiles into a jar the service puts on SCALA drivers' classpath (--jars) beside Ilum's job interface.
Every call is one py4j round trip returning the outcome as JSON: `{"result": str | null}` or
`{"error": {"message", "stackTrace"}}`, the stack trace with the JVM's frames from the user's code up.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from typing import Any

from py4j.java_gateway import JavaClass
from pyspark.sql import SparkSession

REPL_CLASS_DIR_CONF = "spark.repl.class.outputDir"
"""Where the interpreter writes the classes it compiles; Spark serves them to executors
(spark.repl.class.uri). Must be set before the SparkContext starts."""

HELPER_PACKAGE = "sparkrunner"


class JvmSetupError(RuntimeError):
    """The driver cannot serve a SCALA group (helper classes missing, no class directory)."""


class JvmUserError(Exception):
    """A user error the JVM side has already described as `{message, stackTrace}`."""

    def __init__(self, message: str, stack_trace: str) -> None:
        super().__init__(message)
        self.message = message
        self.stack_trace = stack_trace


def helper_class(spark: SparkSession, name: str) -> Any:
    """A class of the helper jar; py4j answers a package for a name it cannot load."""
    found = getattr(getattr(spark._jvm, HELPER_PACKAGE), name)
    if not isinstance(found, JavaClass):
        raise JvmSetupError(
            f"{HELPER_PACKAGE}.{name} is not on the driver's classpath: the driver of a SCALA group needs "
            "the runner's jar (built by scripts/setup.sh) among its --jars"
        )
    return found


def outcome(text: str) -> str | None:
    """The result of one JVM call's JSON outcome; raises JvmUserError for an error."""
    parsed = json.loads(text)
    error = parsed.get("error")
    if error is not None:
        raise JvmUserError(str(error.get("message", "")), str(error.get("stackTrace", "")))
    result = parsed.get("result")
    return None if result is None else str(result)


class JvmJobs:
    """Runs job classes from the group's jars and packages: `run(spark, config)` of a new instance per
    execution, config as a Scala Map (JSON objects as Maps, arrays as Lists), Option[String] back."""

    def __init__(self, spark: SparkSession) -> None:
        self._runner = helper_class(spark, "JobRunner")(spark._jsparkSession)

    def run(self, job_class: str, config: Any) -> str | None:
        # One string each way: py4j would otherwise convert a dict entry by entry, a round trip each.
        return outcome(self._runner.run(job_class, json.dumps(config)))


class ScalaCodeScope:
    """The Scala interpreter of a CODE group's driver (spark-shell's), bound to `spark` and `sc`;
    definitions persist between executions. Starting it compiles a first line: several seconds."""

    def __init__(self, spark: SparkSession) -> None:
        class_dir = spark.sparkContext.getConf().get(REPL_CLASS_DIR_CONF)
        if not class_dir:
            raise JvmSetupError(
                f"{REPL_CLASS_DIR_CONF} is not set: executors could not load the interpreter's classes"
            )
        self._repl = helper_class(spark, "ScalaRepl")(spark._jsparkSession, class_dir)

    def run(self, code: str) -> str | None:
        return outcome(self._repl.execute(code))


def new_class_dir() -> str:
    return tempfile.mkdtemp(prefix="spark-runner-repl-")


def remove_class_dir(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)
