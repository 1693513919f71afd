"""Loading and running job classes and code, against a real local SparkSession."""

from __future__ import annotations

import logging
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from spark_runner.execution import CODE_EXECUTE, JOB_EXECUTE, ExecutionResult, Executor, redact

# The SparkPi example of ilum-job-api's README, verbatim: existing job code must run unchanged.
SPARK_PI_README = """
from ilum.api import IlumJob
from random import random
from operator import add


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
"""


@pytest.fixture
def job_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def unique(prefix: str) -> str:
    """Module names must not repeat across tests: sys.modules outlives a test."""
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def write_module(directory: Path, dotted: str, source: str) -> None:
    *packages, module = dotted.split(".")
    for depth in range(1, len(packages) + 1):
        package = directory.joinpath(*packages[:depth])
        package.mkdir(exist_ok=True)
        (package / "__init__.py").touch()
    directory.joinpath(*packages, f"{module}.py").write_text(textwrap.dedent(source))


def run_job(executor: Executor, job_class: str, config: dict[str, Any] | None = None) -> ExecutionResult:
    return executor.execute(
        {
            "jobInstanceId": "ji-1",
            "groupId": "g-1",
            "type": JOB_EXECUTE,
            "jobClass": job_class,
            "jobConfig": config if config is not None else {},
        }
    )


def run_code(executor: Executor, code: str) -> ExecutionResult:
    return executor.execute(
        {"jobInstanceId": "ji-2", "groupId": "g-1", "type": CODE_EXECUTE, "code": code, "jobConfig": {}}
    )


@pytest.fixture
def jobs(spark: SparkSession) -> Executor:
    return Executor(spark, "instance-1", "JOB")


@pytest.fixture
def code(spark: SparkSession) -> Executor:
    return Executor(spark, "instance-2", "CODE")


class TestJobClasses:
    def test_readme_spark_pi_example_runs_unchanged(self, jobs: Executor, job_dir: Path) -> None:
        module = unique("spark_pi")
        write_module(job_dir, module, SPARK_PI_README)

        outcome = run_job(jobs, f"{module}.SparkPiInteractiveExample", {"partitions": "2"})

        assert outcome["error"] is None
        assert outcome["result"] is not None and outcome["result"].startswith("Pi is roughly 3.1")

    def test_dotted_module_path_and_config_as_given(self, jobs: Executor, job_dir: Path) -> None:
        package = unique("pkg")
        write_module(
            job_dir,
            f"{package}.sub.jobs",
            """
            import json

            class EchoConfig:
                def run(self, spark, config):
                    return json.dumps(config, sort_keys=True)
            """,
        )
        config = {"n": 3, "flag": True, "nested": {"a": [1, 2]}, "s": "x"}

        outcome = run_job(jobs, f"{package}.sub.jobs.EchoConfig", config)

        assert outcome["error"] is None
        assert outcome["result"] == '{"flag": true, "n": 3, "nested": {"a": [1, 2]}, "s": "x"}'

    def test_result_shape(self, jobs: Executor, job_dir: Path) -> None:
        module = unique("shape")
        write_module(job_dir, module, "class Job:\n    def run(self, spark, config):\n        return 42\n")

        outcome = run_job(jobs, f"{module}.Job")

        assert outcome["result"] == "42"  # str() of whatever run returned
        assert outcome["error"] is None
        assert outcome["instanceId"] == "instance-1"
        assert isinstance(outcome["startTime"], int) and outcome["startTime"] <= outcome["endTime"]
        assert set(outcome) == {"result", "error", "startTime", "endTime", "instanceId"}

    def test_none_result(self, jobs: Executor, job_dir: Path) -> None:
        module = unique("none")
        write_module(job_dir, module, "class Job:\n    def run(self, spark, config):\n        return None\n")

        outcome = run_job(jobs, f"{module}.Job")

        assert outcome["result"] is None and outcome["error"] is None

    def test_exception_in_run_is_an_error_with_the_users_traceback(
        self, jobs: Executor, job_dir: Path
    ) -> None:
        module = unique("failing")
        write_module(
            job_dir,
            module,
            """
            from ilum.api import IlumJob

            class Failing(IlumJob):
                def run(self, spark, config):
                    raise ValueError("boom " + config["what"])
            """,
        )

        outcome = run_job(jobs, f"{module}.Failing", {"what": "here"})

        assert outcome["result"] is None
        assert outcome["error"] is not None
        assert outcome["error"]["message"] == "ValueError: boom here"
        trace = outcome["error"]["stackTrace"]
        assert trace.startswith("Traceback (most recent call last):")
        assert f"{module}.py" in trace and 'raise ValueError("boom " + config["what"])' in trace
        assert "execution.py" not in trace  # starts at the user's frame

    def test_spark_error_inside_run(self, jobs: Executor, job_dir: Path) -> None:
        module = unique("bad_sql")
        write_module(
            job_dir,
            module,
            "class Job:\n    def run(self, spark, config):\n"
            "        return spark.sql('SELECT * FROM missing_table').count()\n",
        )

        outcome = run_job(jobs, f"{module}.Job")

        assert outcome["error"] is not None
        assert outcome["error"]["message"].startswith("AnalysisException: ")
        assert "missing_table" in outcome["error"]["message"]

    def test_sys_exit_in_run_does_not_end_the_driver(self, jobs: Executor, job_dir: Path) -> None:
        module = unique("exits")
        write_module(
            job_dir,
            module,
            "import sys\nclass Job:\n    def run(self, spark, config):\n        sys.exit(3)\n",
        )

        outcome = run_job(jobs, f"{module}.Job")

        assert outcome["error"] is not None and outcome["error"]["message"] == "SystemExit: 3"

    def test_unknown_module(self, jobs: Executor) -> None:
        outcome = run_job(jobs, "no_such_module_x.Job")

        assert outcome["result"] is None
        assert outcome["error"] is not None
        assert outcome["error"]["message"] == "ModuleNotFoundError: No module named 'no_such_module_x'"
        assert "ModuleNotFoundError" in outcome["error"]["stackTrace"]

    def test_unknown_class(self, jobs: Executor, job_dir: Path) -> None:
        module = unique("has_no_class")
        write_module(job_dir, module, "X = 1\n")

        outcome = run_job(jobs, f"{module}.Missing")

        assert outcome["error"] is not None
        assert outcome["error"]["message"] == f"AttributeError: module '{module}' has no attribute 'Missing'"

    def test_job_class_without_module(self, jobs: Executor) -> None:
        outcome = run_job(jobs, "JustAClass")

        assert outcome["error"] is not None
        assert outcome["error"]["message"] == "ValueError: jobClass must be 'module.Class', got 'JustAClass'"

    @pytest.mark.parametrize(
        ("source", "message"),
        [
            ("Job = 5\n", "TypeError: {module}.Job is not a class"),
            ("class Job:\n    pass\n", "TypeError: {module}.Job has no run(spark, config) method"),
            (
                "from ilum.api import IlumJob\nclass Job(IlumJob):\n    pass\n",
                "TypeError: Can't instantiate abstract class Job with abstract method run",
            ),
        ],
        ids=["not-callable", "no-run", "abstract-ilum-job"],
    )
    def test_not_a_job(self, jobs: Executor, job_dir: Path, source: str, message: str) -> None:
        module = unique("not_a_job")
        write_module(job_dir, module, source)

        outcome = run_job(jobs, f"{module}.Job")

        assert outcome["result"] is None
        assert outcome["error"] is not None and outcome["error"]["message"] == message.format(module=module)

    def test_loaded_class_is_cached(self, jobs: Executor, job_dir: Path) -> None:
        module = unique("cached")
        write_module(
            job_dir, module, "class Job:\n    def run(self, spark, config):\n        return 'first'\n"
        )
        assert run_job(jobs, f"{module}.Job")["result"] == "first"

        # Neither a changed file nor a missing one matters once the class is loaded.
        (job_dir / f"{module}.py").unlink()

        assert run_job(jobs, f"{module}.Job")["result"] == "first"

    def test_failed_import_is_not_cached(self, jobs: Executor, job_dir: Path) -> None:
        module = unique("late")
        assert run_job(jobs, f"{module}.Job")["error"] is not None

        write_module(
            job_dir, module, "class Job:\n    def run(self, spark, config):\n        return 'shipped later'\n"
        )

        outcome = run_job(jobs, f"{module}.Job")

        assert outcome["error"] is None and outcome["result"] == "shipped later"

    def test_new_instance_per_execution(self, jobs: Executor, job_dir: Path) -> None:
        module = unique("counter")
        write_module(
            job_dir,
            module,
            "class Job:\n    def __init__(self):\n        self.calls = 0\n"
            "    def run(self, spark, config):\n        self.calls += 1\n        return self.calls\n",
        )

        results = [run_job(jobs, f"{module}.Job")["result"] for _ in range(2)]

        assert results == ["1", "1"]

    def test_secret_config_values_are_not_logged(
        self, jobs: Executor, job_dir: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        module = unique("logged")
        write_module(job_dir, module, "class Job:\n    def run(self, spark, config):\n        return 'ok'\n")
        config = {"user": "alice", "password": "hunter2", "apiToken": "t0k3n", "db": {"secretKey": "s3cr3t"}}

        with caplog.at_level(logging.DEBUG, logger="spark_runner"):
            run_job(jobs, f"{module}.Job", config)

        lines = [record.getMessage() for record in caplog.records if record.name.startswith("spark_runner")]
        assert len(lines) == 1  # one line per execution
        assert "alice" in lines[0]
        assert not any(secret in lines[0] for secret in ("hunter2", "t0k3n", "s3cr3t"))

    def test_code_is_refused_by_a_job_group(self, jobs: Executor) -> None:
        outcome = run_code(jobs, "1 + 1")

        assert outcome["error"] is not None
        assert outcome["error"]["message"] == (
            "ValueError: execution type 'interactive_code_execute' is not supported by a JOB group"
        )

    def test_unknown_execution_type(self, jobs: Executor) -> None:
        outcome = jobs.execute(
            {"jobInstanceId": "x", "groupId": "g", "type": "interactive_sql_execute", "jobConfig": {}}
        )

        assert outcome["error"] is not None and "interactive_sql_execute" in outcome["error"]["message"]


class TestCode:
    def test_scope_persists_between_executions(self, code: Executor) -> None:
        assert run_code(code, "x = 41")["result"] is None
        assert run_code(code, "x + 1")["result"] == "42"

    def test_printed_output_is_the_result_without_a_trailing_value(self, code: Executor) -> None:
        outcome = run_code(code, "for i in range(3):\n    print(i)")

        assert outcome["error"] is None and outcome["result"] == "0\n1\n2\n"

    def test_last_expression_value_wins_over_printed_output(self, code: Executor) -> None:
        assert run_code(code, "print('noise')\n'value'")["result"] == "value"

    def test_trailing_none_expression_falls_back_to_printed_output(self, code: Executor) -> None:
        assert run_code(code, "print('printed')")["result"] == "printed\n"
        assert run_code(code, "None")["result"] is None

    def test_spark_and_sc_are_in_scope(self, code: Executor) -> None:
        assert run_code(code, "spark.range(5).count()")["result"] == "5"
        assert run_code(code, "sc.parallelize([1, 2, 3]).sum()")["result"] == "6"

    def test_functions_defined_in_code_run_on_executors(self, code: Executor) -> None:
        run_code(code, "def square(v):\n    return v * v")

        assert run_code(code, "sc.parallelize(range(4)).map(square).collect()")["result"] == "[0, 1, 4, 9]"

    def test_exception_is_an_error(self, code: Executor) -> None:
        outcome = run_code(code, "a = 1\nraise KeyError('missing')")

        assert outcome["result"] is None
        assert outcome["error"] is not None
        assert outcome["error"]["message"] == "KeyError: 'missing'"
        assert 'File "<code>", line 2' in outcome["error"]["stackTrace"]
        assert run_code(code, "a")["result"] == "1"  # statements before the failure took effect

    def test_syntax_error(self, code: Executor) -> None:
        outcome = run_code(code, "x = (")

        assert outcome["error"] is not None
        assert outcome["error"]["message"].startswith("SyntaxError: ")

    def test_stdout_is_restored(self, code: Executor, capsys: pytest.CaptureFixture[str]) -> None:
        run_code(code, "print('captured')")
        print("after")

        assert capsys.readouterr().out == "after\n"


def test_redact_masks_secret_looking_keys_at_any_depth() -> None:
    config = {
        "password": "p",
        "TOKEN": "t",
        "ssh_key": "k",
        "plain": "v",
        "nested": [{"client_secret": "s", "n": 1}],
    }

    assert redact(config) == {
        "password": "***",
        "TOKEN": "***",
        "ssh_key": "***",
        "plain": "v",
        "nested": [{"client_secret": "***", "n": 1}],
    }
