// The JVM Spark Connect client (spark-connect-client-jvm_2.13 4.0.0) running one query, for
// test/e2e/spark-connect.test.ts: java ConnectJvmClient 'sc://host:port/;use_ssl=true;token=<API key>'. Prints
// {"one":1,"range":[0, 1, 2, 3, 4]} on stdout; a failure is the JVM's exception on stderr and exit code 1.
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.connect.SparkSession;

public final class ConnectJvmClient {
  public static void main(String[] args) {
    SparkSession spark = SparkSession.builder().remote(args[0]).getOrCreate();
    try {
      List<Row> one = spark.sql("select 1 as one").collectAsList();
      List<Long> range = spark.range(5).collectAsList();
      System.out.println("{\"one\":" + one.get(0).getInt(0) + ",\"range\":" + range + "}");
    } finally {
      // Logs a warning against a 3.5 server: it has no ReleaseSession (UNIMPLEMENTED).
      spark.close();
    }
  }
}
