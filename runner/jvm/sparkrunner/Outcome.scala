package sparkrunner

import java.io.{PrintWriter, StringWriter}
import java.lang.reflect.{InvocationTargetException, UndeclaredThrowableException}
import java.util.{LinkedHashMap => JMap}

import com.fasterxml.jackson.databind.ObjectMapper

/** What one execution produced, as the JSON the Python runner reads: one py4j round trip per call.
  * `{"result": str|null}` or `{"error": {"message": str, "stackTrace": str}}`. */
private[sparkrunner] object Outcome {
  private val json = new ObjectMapper()

  def result(value: String): String = {
    val m = new JMap[String, AnyRef]()
    m.put("result", value)
    json.writeValueAsString(m)
  }

  def error(message: String, stackTrace: String): String = {
    val e = new JMap[String, AnyRef]()
    e.put("message", message)
    e.put("stackTrace", stackTrace)
    val m = new JMap[String, AnyRef]()
    m.put("error", e)
    json.writeValueAsString(m)
  }

  def failure(t: Throwable): String = {
    val cause = unwrap(t)
    error(cause.toString, userTrace(cause))
  }

  /** Reflection wraps what the user's code threw; the user wants their own exception. */
  def unwrap(t: Throwable): Throwable = t match {
    case e: InvocationTargetException if e.getCause != null => unwrap(e.getCause)
    case e: UndeclaredThrowableException if e.getCause != null => unwrap(e.getCause)
    case e: ExceptionInInitializerError if e.getCause != null => unwrap(e.getCause)
    case e => e
  }

  /** The stack trace as Java prints it, without the frames below the user's code (this runner,
    * reflection, py4j): the top trace ends where the runner called in. Causes print in full. */
  def userTrace(t: Throwable): String = {
    val frames = t.getStackTrace
    val cut = frames.indexWhere(f => f.getClassName.startsWith("sparkrunner."))
    if (cut >= 0) t.setStackTrace(frames.take(cut))
    val text = new StringWriter()
    t.printStackTrace(new PrintWriter(text, true))
    text.toString
  }
}
