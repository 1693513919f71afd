"""SCALA groups inside the driver's JVM: job classes on Ilum's `cloud.ilum.job.Job` and the Scala
interpreter, against the real local SparkSession of conftest.py (which has the runner's jars and the
Java job classes compiled there)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from pyspark.sql import SparkSession

from spark_runner.execution import CODE_EXECUTE, JOB_EXECUTE, ExecutionResult, Executor
from spark_runner.jvm import JvmSetupError, JvmUserError, helper_class, outcome

from conftest import needs_jvm


def run_job(executor: Executor, job_class: str, config: dict[str, Any] | None = None) -> ExecutionResult:
    return executor.execute(
        {
            "jobInstanceId": "ji-1",
            "groupId": "g-1",
            "type": JOB_EXECUTE,
            "jobClass": job_class,
            "jobConfig": config or {},
        }
    )


def run_code(executor: Executor, code: str) -> ExecutionResult:
    return executor.execute(
        {"jobInstanceId": "ji-2", "groupId": "g-1", "type": CODE_EXECUTE, "code": code, "jobConfig": {}}
    )


def error_of(result: ExecutionResult) -> dict[str, str]:
    assert result["result"] is None
    assert result["error"] is not None, "expected an error"
    return dict(result["error"])


class TestOutcome:
    def test_result_and_null(self) -> None:
        assert outcome('{"result": "x"}') == "x"
        assert outcome('{"result": null}') is None

    def test_error_raises_with_message_and_trace(self) -> None:
        with pytest.raises(JvmUserError) as raised:
            error = {"message": "java.lang.X: y", "stackTrace": "java.lang.X: y\n\tat a.B.c(B.java:1)"}
            outcome(json.dumps({"error": error}))
        assert raised.value.message == "java.lang.X: y"
        assert raised.value.stack_trace.endswith("(B.java:1)")


@pytest.fixture(scope="module")
def jobs(spark: SparkSession) -> Executor:
    return Executor(spark, "instance-scala", "JOB", "SCALA")


@pytest.fixture(scope="module")
def scala(spark: SparkSession) -> Executor:
    # Starts the interpreter: several seconds, once for the module.
    return Executor(spark, "instance-scala-code", "CODE", "SCALA")


@needs_jvm
class TestJvmJobClasses:
    def test_result_from_a_java_job_class(self, jobs: Executor) -> None:
        result = run_job(jobs, "testjobs.Echo", {"say": "hello from the JVM"})

        assert result["error"] is None
        assert result["result"] == "hello from the JVM"
        assert result["instanceId"] == "instance-scala"
        assert result["endTime"] >= result["startTime"]

    def test_none_and_null_option_are_a_null_result(self, jobs: Executor) -> None:
        for job_class in ("testjobs.Echo", "testjobs.NullOption"):
            result = run_job(jobs, job_class)
            assert (result["result"], result["error"]) == (None, None)

    def test_config_arrives_as_a_scala_map_of_json_values(self, jobs: Executor) -> None:
        config = {"s": "x", "n": 3, "f": 1.5, "b": True, "none": None, "list": [1, "a"], "map": {"k": "v"}}

        result = run_job(jobs, "testjobs.Types", config)

        assert result["error"] is None
        assert result["result"] == (
            "b=true:java.lang.Boolean;"
            "f=1.5:java.lang.Double;"
            "list=List(1, a):scala.collection.immutable.$colon$colon;"
            "map=Map(k -> v):scala.collection.immutable.Map$Map1;"
            "n=3:java.lang.Integer;"
            "none=null:null;"
            "s=x:java.lang.String;"
        )

    def test_job_uses_the_drivers_spark_session(self, jobs: Executor) -> None:
        assert run_job(jobs, "testjobs.Count", {"n": "7"})["result"] == "7"

    def test_exception_is_an_error_with_the_jvm_stack_trace_from_the_users_code(self, jobs: Executor) -> None:
        error = error_of(run_job(jobs, "testjobs.Fail", {"why": "testing"}))

        assert error["message"] == "java.lang.IllegalStateException: failed on purpose: testing"
        lines = error["stackTrace"].splitlines()
        assert lines[0] == error["message"]
        assert re.fullmatch(r"\s+at testjobs\.Fail\.check\(Fail\.java:\d+\)", lines[1])
        assert re.fullmatch(r"\s+at testjobs\.Fail\.run\(Fail\.java:\d+\)", lines[2])
        # Nothing below the user's code: no runner, reflection or py4j frames.
        assert len(lines) == 3

    def test_unknown_class_is_an_error_naming_it(self, jobs: Executor) -> None:
        error = error_of(run_job(jobs, "testjobs.Missing"))

        assert error["message"] == (
            "java.lang.ClassNotFoundException: testjobs.Missing (no such class in the group's jars and packages)"
        )

    def test_a_class_that_is_not_a_job(self, jobs: Executor) -> None:
        error = error_of(run_job(jobs, "testjobs.NotAJob"))

        assert error["message"] == (
            "java.lang.IllegalArgumentException: testjobs.NotAJob does not implement cloud.ilum.job.Job"
        )

    def test_code_is_refused_by_a_job_group(self, jobs: Executor) -> None:
        assert "not supported by a JOB group" in error_of(run_code(jobs, "1 + 1"))["message"]

    def test_missing_helper_class_is_a_setup_error(self, spark: SparkSession) -> None:
        with pytest.raises(JvmSetupError, match="sparkrunner.NoSuchHelper is not on the driver's classpath"):
            helper_class(spark, "NoSuchHelper")


@needs_jvm
class TestScalaCode:
    def test_definitions_persist_between_executions(self, scala: Executor) -> None:
        for definition in ("val x = 20", "val y = 1"):
            result = run_code(scala, definition)
            assert (result["result"], result["error"]) == (None, None)
        assert run_code(scala, "def twice(i: Int) = i * 2\ntwice(x) + y")["result"] == "41"

    def test_value_is_rendered_as_the_repl_renders_it(self, scala: Executor) -> None:
        assert run_code(scala, "Array(1, 2, 3)")["result"] == "Array(1, 2, 3)"
        assert run_code(scala, '"plain"')["result"] == "plain"
        assert run_code(scala, "()")["result"] is None

    def test_printed_output_without_a_trailing_value(self, scala: Executor) -> None:
        assert run_code(scala, 'println("one")\nSystem.out.println("two")')["result"] == "one\ntwo\n"
        assert run_code(scala, 'println("noise")\n42')["result"] == "42"

    def test_spark_and_sc_and_closures_on_executors(self, scala: Executor) -> None:
        assert run_code(scala, "spark.range(5).count()")["result"] == "5"
        run_code(scala, "val factor = 3\ndef scale(i: Int) = i * factor")
        assert run_code(scala, "sc.parallelize(1 to 3).map(scale).collect()")["result"] == "Array(3, 6, 9)"
        # spark-shell's imports: implicits and functions.
        assert run_code(scala, "Seq(1, 2).toDF(\"v\").select(sum(col(\"v\"))).first().getLong(0)")["result"] == "3"

    def test_job_classes_from_the_jars_run_in_a_code_group(self, scala: Executor) -> None:
        assert run_job(scala, "testjobs.Echo", {"say": "also here"})["result"] == "also here"
        assert run_code(scala, 'new testjobs.Echo().run(spark, Map("say" -> "typed"))')["result"] == "Some(typed)"

    def test_compile_error_comes_back_with_the_compilers_text(self, scala: Executor) -> None:
        error = error_of(run_code(scala, "val ok = 1\nnotDefined + 1"))

        assert "error: not found: value notDefined" in error["message"]
        assert "notDefined + 1" in error["stackTrace"] and "^" in error["stackTrace"]
        assert error_of(run_code(scala, "ok"))["message"].endswith("error: not found: value ok")  # nothing ran

    def test_incomplete_input(self, scala: Executor) -> None:
        error = error_of(run_code(scala, "val broken = (1 +"))

        assert error["message"] == "error: incomplete input: the code ends inside a statement"

    def test_runtime_exception(self, scala: Executor) -> None:
        code = 'def fail(): Int = throw new IllegalArgumentException("bad input")\nfail()'
        error = error_of(run_code(scala, code))

        assert error["message"] == "java.lang.IllegalArgumentException: bad input"
        assert error["stackTrace"].startswith("java.lang.IllegalArgumentException: bad input\n")
        assert "at fail(" in error["stackTrace"]
        assert run_code(scala, "1 + 1")["result"] == "2"  # the interpreter goes on

    def test_failed_spark_task(self, scala: Executor) -> None:
        error = error_of(run_code(scala, "sc.parallelize(1 to 3).map(i => 10 / (i - 2)).collect()"))

        assert error["message"].startswith("org.apache.spark.SparkException: Job aborted due to stage failure")
        assert "java.lang.ArithmeticException: / by zero" in error["stackTrace"]

    def test_system_out_is_restored(self, scala: Executor, spark: SparkSession) -> None:
        run_code(scala, 'println("captured")')
        system_out = spark._jvm.System.out
        assert "ByteArrayOutputStream" not in str(system_out.getClass().getName())
