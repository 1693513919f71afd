// JVM options of the Spark JVMs tests start: short-lived JVMs on two cores, where the C1 compiler alone and the
// serial collector spend far less CPU on start-up (a trivial PySpark job: 12.5 -> 6.8 CPU-seconds; a small YARN
// job: ~20 % less). The same options are in test/spark-conf/spark-defaults.conf, which spark-submit reads for
// local drivers; the service itself never sets them.

/** As one string: a value of `spark.*.extraJavaOptions` or SPARK_SUBMIT_OPTS. */
export const TEST_JVM_OPTIONS = '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC';
