"""What one `executeJobInstance` call does inside the driver: load and run a job class, or run code
in the group's persistent scope. No Temporal here, so it is testable with a bare SparkSession.

User errors never raise out of `Executor.execute`; they come back as `error: {message, stackTrace}`.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import io
import logging
import re
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from importlib.machinery import FileFinder
from typing import Any, Literal, TypedDict

from pyspark.sql import SparkSession

from .config import GroupKind, Language
from .jvm import JvmJobs, JvmUserError, ScalaCodeScope

log = logging.getLogger("spark_runner.execution")

JOB_EXECUTE = "interactive_job_execute"
CODE_EXECUTE = "interactive_code_execute"
ExecutionType = Literal["interactive_job_execute", "interactive_code_execute"]

# Which execution types a group kind accepts. A JOB group's driver must not accumulate user state
# in a code scope; a CODE group may still run job classes shipped to it.
ALLOWED_TYPES: dict[GroupKind, frozenset[str]] = {
    "JOB": frozenset({JOB_EXECUTE}),
    "CODE": frozenset({CODE_EXECUTE, JOB_EXECUTE}),
}

CODE_FILENAME = "<code>"
_SECRET_KEY = re.compile(r"pass|secret|key|token|credential", re.IGNORECASE)


class ExecutionError(TypedDict):
    message: str
    stackTrace: str


class ExecutionResult(TypedDict):
    result: str | None
    error: ExecutionError | None
    startTime: int
    endTime: int
    instanceId: str


class JobLoader:
    """Resolves `module.Class` (dotted module paths allowed) to a class, once per name.

    Only successes are cached: Python already forgets a module whose import failed, so a job file
    shipped after a failed attempt is picked up by the next call.
    """

    def __init__(self) -> None:
        self._classes: dict[str, Callable[[], Any]] = {}

    def load(self, job_class: str) -> Callable[[], Any]:
        cls = self._classes.get(job_class)
        if cls is not None:
            return cls
        module_name, _, class_name = job_class.rpartition(".")
        if not module_name or not class_name:
            raise ValueError(f"jobClass must be 'module.Class', got {job_class!r}")
        _forget_directory_listings()
        module = importlib.import_module(module_name)
        found: Callable[[], Any] = getattr(module, class_name)
        if not callable(found):
            raise TypeError(f"{job_class} is not a class")
        self._classes[job_class] = found
        return found


class CodeScope:
    """The persistent globals of a CODE group's driver: a variable defined by one execution is
    visible to the next. Starts with `spark` and `sc`."""

    def __init__(self, spark: SparkSession) -> None:
        # __name__ == '__main__' makes cloudpickle ship functions and classes defined here by value,
        # so executors can run them without importing a module that does not exist.
        self.globals: dict[str, Any] = {
            "__name__": "__main__",
            "spark": spark,
            "sc": spark.sparkContext,
        }

    def run(self, code: str) -> str | None:
        """Runs `code`; returns str(value) of a trailing expression that is not None, else what the
        code printed, else None (like a REPL, which does not echo None, e.g. of a final print())."""
        tree = ast.parse(code, filename=CODE_FILENAME, mode="exec")
        trailing: ast.expr | None = None
        last = tree.body[-1] if tree.body else None
        if isinstance(last, ast.Expr):
            tree.body.pop()
            trailing = last.value
        printed = io.StringIO()
        value: Any = None
        with contextlib.redirect_stdout(printed):
            exec(compile(tree, CODE_FILENAME, "exec"), self.globals)
            if trailing is not None:
                value = eval(compile(ast.Expression(trailing), CODE_FILENAME, "eval"), self.globals)
        if value is not None:
            return str(value)
        return printed.getvalue() or None


class Executor:
    """Runs executions for one driver. Not thread-safe: the runner calls it from one thread.

    The group's language decides what runs: PYTHON job classes and code here, SCALA (JVM) job classes
    and Scala code inside the driver's JVM (jvm.py). Requests, results and errors look the same."""

    def __init__(
        self, spark: SparkSession, instance_id: str, group_kind: GroupKind, language: Language = "PYTHON"
    ) -> None:
        self.spark = spark
        self.instance_id = instance_id
        self.allowed_types = ALLOWED_TYPES[group_kind]
        self.group_kind = group_kind
        self.language = language
        self.jobs = JobLoader()
        self.jvm_jobs = JvmJobs(spark) if language == "SCALA" else None
        self.code_scope: CodeScope | ScalaCodeScope | None = None
        if group_kind == "CODE":
            self.code_scope = ScalaCodeScope(spark) if language == "SCALA" else CodeScope(spark)

    def execute(self, request: Mapping[str, Any]) -> ExecutionResult:
        start = time.time()
        result: str | None = None
        error: ExecutionError | None = None
        try:
            result = self._dispatch(request)
        except JvmUserError as exc:
            error = {"message": exc.message, "stackTrace": exc.stack_trace}
        except (Exception, SystemExit) as exc:  # SystemExit: a job calling sys.exit() must not end the driver
            error = describe_error(exc)
        end = time.time()
        if log.isEnabledFor(logging.DEBUG):
            log.debug(
                "executed jobInstanceId=%s type=%s %s took=%.1fms outcome=%s",
                request.get("jobInstanceId"),
                request.get("type"),
                _describe_target(request),
                (end - start) * 1000,
                "error" if error else "ok",
            )
        return {
            "result": result,
            "error": error,
            "startTime": int(start * 1000),
            "endTime": int(end * 1000),
            "instanceId": self.instance_id,
        }

    def _dispatch(self, request: Mapping[str, Any]) -> str | None:
        kind = request.get("type")
        if kind not in self.allowed_types:
            raise ValueError(f"execution type {kind!r} is not supported by a {self.group_kind} group")
        if kind == JOB_EXECUTE:
            job_class = request.get("jobClass")
            if not isinstance(job_class, str) or not job_class:
                raise ValueError("jobClass is required for interactive_job_execute")
            return self.run_job(job_class, request.get("jobConfig") or {})
        code = request.get("code")
        if not isinstance(code, str):
            raise ValueError("code is required for interactive_code_execute")
        assert self.code_scope is not None  # CODE_EXECUTE is only allowed in CODE groups
        return self.code_scope.run(code)

    def run_job(self, job_class: str, config: Any) -> str | None:
        if self.jvm_jobs is not None:
            return self.jvm_jobs.run(job_class, config)
        job = self.jobs.load(job_class)()
        run = getattr(job, "run", None)
        if not callable(run):
            raise TypeError(f"{job_class} has no run(spark, config) method")
        returned = run(self.spark, config)
        return None if returned is None else str(returned)


def _forget_directory_listings() -> None:
    """Lets imports see files added to sys.path directories since start (SparkContext.addFile).

    Not importlib.invalidate_caches(): that also re-reads every zip on sys.path, among them
    Spark's jar of some 10,000 entries, which costs ~200 ms per call."""
    for finder in list(sys.path_importer_cache.values()):
        if isinstance(finder, FileFinder):
            finder.invalidate_caches()


def describe_error(exc: BaseException) -> ExecutionError:
    """`{message, stackTrace}` of a user error, the traceback starting at the user's code."""
    detail = str(exc)
    message = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
    # Drop the runner's own frames so the trace starts where the user's code (or import) failed;
    # keep them when the runner itself raised (bad request, missing run method).
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    lines = traceback.format_exception(type(exc), exc, tb or exc.__traceback__)
    return {"message": message, "stackTrace": "".join(lines)}


def redact(value: Any) -> Any:
    """A copy of a jobConfig fit for logs: values under secret-looking keys are masked."""
    if isinstance(value, Mapping):
        return {key: "***" if _SECRET_KEY.search(str(key)) else redact(item) for key, item in value.items()}
    if isinstance(value, list):
        return [redact(item) for item in value]
    return value


def _describe_target(request: Mapping[str, Any]) -> str:
    if request.get("type") == JOB_EXECUTE:
        return f"jobClass={request.get('jobClass')} config={redact(request.get('jobConfig') or {})}"
    code = request.get("code")
    # Code may embed secrets too; its size is enough to tell executions apart.
    return f"code={len(code) if isinstance(code, str) else 0} chars"
