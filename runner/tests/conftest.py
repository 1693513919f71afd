"""Shared fixtures. The runner's package lives next to runner.py, not installed: put it on sys.path."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

RUNNER_DIR = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(RUNNER_DIR))

# Python workers of the test SparkSession must be this interpreter (it has pyspark and ilum).
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

import pyspark  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402  (needs the environment above)

from spark_runner.jvm import REPL_CLASS_DIR_CONF  # noqa: E402

# The JVM jars of SCALA groups, made by scripts/setup.sh.
JVM_DIR = Path(os.environ.get("STACK_DIR", RUNNER_DIR.parent / ".stack")) / "jvm"
JVM_JARS = [JVM_DIR / "ilum-job-api-6.0.0.jar", JVM_DIR / "spark-runner.jar"]
HAVE_JVM = all(jar.exists() for jar in JVM_JARS) and shutil.which("javac") is not None
needs_jvm = pytest.mark.skipif(not HAVE_JVM, reason=f"needs {JVM_DIR}/*.jar (scripts/setup.sh) and javac")

# Java job classes for cloud.ilum.job.Job, compiled once per session into the test SparkSession's jars.
JAVA_JOBS = {
    "Echo": """
        public Option<String> run(SparkSession spark, Map<String, Object> config) {
            return config.contains("say") ? Option.apply(String.valueOf(config.apply("say"))) : Option.empty();
        }""",
    "Types": """
        // Every config value with its JVM class, keys sorted: what a job sees of the JSON it was given.
        public Option<String> run(SparkSession spark, Map<String, Object> config) {
            java.util.List<String> keys =
                new java.util.ArrayList<>(scala.collection.JavaConverters.setAsJavaSet(config.keySet()));
            java.util.Collections.sort(keys);
            StringBuilder out = new StringBuilder();
            for (String key : keys) {
                Object value = config.apply(key);
                out.append(key).append('=').append(value).append(':')
                   .append(value == null ? "null" : value.getClass().getName()).append(';');
            }
            return Option.apply(out.toString());
        }""",
    "Count": """
        public Option<String> run(SparkSession spark, Map<String, Object> config) {
            return Option.apply(Long.toString(spark.range(Long.parseLong((String) config.apply("n"))).count()));
        }""",
    "Fail": """
        public Option<String> run(SparkSession spark, Map<String, Object> config) {
            return check(config);
        }
        private Option<String> check(Map<String, Object> config) {
            throw new IllegalStateException("failed on purpose: " + config.apply("why"));
        }""",
    "NullOption": """
        public Option<String> run(SparkSession spark, Map<String, Object> config) {
            return null;
        }""",
}


def compile_java_jobs(directory: Path) -> Path:
    """testjobs.<Name> for each of JAVA_JOBS, plus testjobs.NotAJob, in one jar."""
    sources = directory / "src" / "testjobs"
    sources.mkdir(parents=True)
    header = (
        "package testjobs;\n"
        "import org.apache.spark.sql.SparkSession;\n"
        "import scala.Option;\n"
        "import scala.collection.immutable.Map;\n"
    )
    for name, body in JAVA_JOBS.items():
        source = f"{header}public class {name} implements cloud.ilum.job.Job {{{body}\n}}\n"
        (sources / f"{name}.java").write_text(source)
    (sources / "NotAJob.java").write_text("package testjobs;\npublic class NotAJob {}\n")
    classes = directory / "classes"
    spark_jars = Path(pyspark.__file__).parent / "jars"
    classpath = os.pathsep.join([f"{spark_jars}/*", str(JVM_JARS[0])])
    subprocess.run(
        ["javac", "-nowarn", "-cp", classpath, "-d", str(classes), *map(str, sources.glob("*.java"))],
        check=True, capture_output=True,
    )  # fmt: skip
    jar = directory / "testjobs.jar"
    subprocess.run(["jar", "cf", str(jar), "-C", str(classes), "."], check=True)
    return jar


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    builder = (
        SparkSession.builder.master("local[1]")
        .appName("runner-unit-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")
    )
    work = Path(tempfile.mkdtemp(prefix="runner-tests-"))
    if HAVE_JVM:
        # As a SCALA group's driver has them: Ilum's interface and the runner's jar, plus the test jobs.
        jars = [*JVM_JARS, compile_java_jobs(work)]
        builder = builder.config("spark.jars", ",".join(map(str, jars)))
        (work / "repl-classes").mkdir()
        builder = builder.config(REPL_CLASS_DIR_CONF, str(work / "repl-classes"))
    session = builder.getOrCreate()
    yield session
    session.stop()
    shutil.rmtree(work, ignore_errors=True)
