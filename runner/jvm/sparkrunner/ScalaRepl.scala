package sparkrunner

import java.io.{ByteArrayOutputStream, File, PrintStream, PrintWriter, StringWriter}
import java.net.URLClassLoader
import java.nio.charset.StandardCharsets.UTF_8

import scala.tools.nsc.GenericRunnerSettings
import scala.tools.nsc.interpreter.{IMain, Results}

import org.apache.spark.sql.SparkSession

/** The Scala interpreter of a CODE group's driver: spark-shell's, bound to the driver's `spark` and
  * `sc`. Definitions persist between executions. Classes are written to `outputDir`, which Spark
  * serves to executors (spark.repl.class.outputDir), so closures defined here run on executors.
  * Settings as spark-shell's (org.apache.spark.repl.Main): class-based wrappers, whose instances
  * can be serialized into closures, and the user's jars on the compiler's classpath. */
class ScalaRepl(spark: SparkSession, outputDir: String) {
  private val loader = JobRunner.loader
  private val messages = new StringWriter()
  private val settings = new GenericRunnerSettings(msg => messages.write(msg + "\n"))
  settings.processArguments(
    List("-Yrepl-class-based", "-Yrepl-outdir", outputDir, "-classpath", ScalaRepl.classpathOf(loader)),
    processAll = true)
  settings.usejavacp.value = true
  // Lines run in the loader that has the group's jars, so a user class is loaded once, by Spark's loader.
  settings.embeddedDefaults(loader)

  private val intp = new IMain(settings, new PrintWriter(messages, true))
  ScalaRepl.session = spark
  init()

  private def init(): Unit = {
    intp.initializeSynchronous()
    // What spark-shell defines and imports, in one line: each line costs a compiler run.
    val prelude =
      """@transient val spark = sparkrunner.ScalaRepl.session
        |@transient val sc = spark.sparkContext
        |import org.apache.spark.SparkContext._
        |import spark.implicits._
        |import spark.sql
        |import org.apache.spark.sql.functions._""".stripMargin
    if (intp.interpret(prelude) != Results.Success)
      throw new IllegalStateException(s"Scala interpreter failed to start:\n$messages")
    messages.getBuffer.setLength(0)
  }

  /** Runs `code`; the outcome (see Outcome) has the value of a trailing expression as the REPL renders
    * it, else what the code printed, else null. */
  def execute(code: String): String = {
    messages.getBuffer.setLength(0)
    val printed = new ByteArrayOutputStream()
    val stream = new PrintStream(printed, true, "UTF-8")
    val stdout = System.out
    val before = intp.lastRequest
    try {
      val result =
        try {
          System.setOut(stream)
          Console.withOut(stream)(intp.interpret(code))
        } finally {
          System.setOut(stdout)
          stream.flush()
        }
      result match {
        case Results.Success => success(before, new String(printed.toByteArray, UTF_8))
        case Results.Incomplete =>
          Outcome.error("error: incomplete input: the code ends inside a statement", messages.toString + code.trim)
        // A failed compile leaves the reporter's errors; a failed run compiled fine (and bound lastException).
        case Results.Error if intp.reporter.hasErrors => compileError()
        case Results.Error => runtimeError(messages.toString)
      }
    } catch {
      case t: Throwable => Outcome.failure(t)
    }
  }

  private def success(before: AnyRef, output: String): String = {
    val request = intp.lastRequest
    // The REPL rewrites a trailing bare expression to `val resN = ...`; only then is there a value.
    val value =
      if (request == null || (request eq before) || request.line == request.originalLine) None
      else intp.valueOfTerm(intp.mostRecentVar).filter(v => v != null && v != (()))
    val rendered = value.map(v => scala.runtime.ScalaRunTime.stringOf(v))
    Outcome.result(rendered.getOrElse(if (output.isEmpty) null else output))
  }

  private def compileError(): String = {
    val text = messages.toString.trim
    Outcome.error(text.linesIterator.find(_.contains("error:")).getOrElse(text).trim, text)
  }

  /** The REPL has already cut the trace at the line's wrapper; the first line is the exception. */
  private def runtimeError(trace: String): String =
    Outcome.error(firstLine(trace), trace)

  private def firstLine(s: String): String = s.linesIterator.find(_.trim.nonEmpty).getOrElse(s).trim

  def close(): Unit = intp.close()
}

object ScalaRepl {
  /** The session the interpreter's `spark` is bound to (one interpreter per driver). */
  @volatile var session: SparkSession = _

  /** The jars spark-submit added (--jars, --packages) as local files, for the compiler. Spark's loader
    * has them as downloaded copies even when they came from remote URIs. */
  def classpathOf(loader: ClassLoader): String =
    Iterator.iterate(loader)(_.getParent).takeWhile(_ != null).collect { case u: URLClassLoader => u.getURLs.toSeq }
      .flatten.filter(_.getProtocol == "file").map(u => new File(u.toURI).getPath).toSeq.distinct
      .mkString(File.pathSeparator)
}
