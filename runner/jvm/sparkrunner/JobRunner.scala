package sparkrunner

import java.util.concurrent.ConcurrentHashMap

import scala.collection.JavaConverters._

import cloud.ilum.job.Job
import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.spark.sql.SparkSession

/** Runs `cloud.ilum.job.Job` classes from the group's jars and packages inside the driver JVM.
  * Called by the Python runner through py4j, one execution at a time. */
class JobRunner(spark: SparkSession) {
  private val json = new ObjectMapper()
  private val loader = JobRunner.loader
  /** Loaded classes by name; a failed load is not cached (a jar may come later). */
  private val classes = new ConcurrentHashMap[String, Class[_]]()

  /** Runs `className` with the JSON object `configJson`; returns the outcome as JSON (see Outcome). */
  def run(className: String, configJson: String): String =
    try {
      val config = JobRunner.toScala(json.readValue(configJson, classOf[java.util.Map[String, AnyRef]]))
        .asInstanceOf[Map[String, Any]]
      val returned = instantiate(className).run(spark, config)
      Outcome.result(if (returned == null) null else returned.orNull)
    } catch {
      case t: Throwable => Outcome.failure(t)
    }

  private def instantiate(className: String): Job = {
    val cls = classes.computeIfAbsent(className, name => load(name))
    val instance: AnyRef =
      try cls.getDeclaredConstructor().newInstance().asInstanceOf[AnyRef]
      catch {
        // A Scala `object` has no public constructor: use its single instance.
        case _: NoSuchMethodException | _: IllegalAccessException =>
          moduleOf(cls).getOrElse(
            throw new IllegalArgumentException(s"$className has no public constructor without arguments"))
      }
    instance match {
      case job: Job => job
      case _ => throw new IllegalArgumentException(s"$className does not implement cloud.ilum.job.Job")
    }
  }

  private def load(name: String): Class[_] =
    try Class.forName(name, true, loader)
    catch {
      // The loader's own frames say nothing to the user: the name and where it was looked for do.
      case _: ClassNotFoundException =>
        throw new ClassNotFoundException(s"$name (no such class in the group's jars and packages)")
    }

  private def moduleOf(cls: Class[_]): Option[AnyRef] =
    try Some(Class.forName(cls.getName + "$", true, loader).getField("MODULE$").get(null))
    catch { case _: ReflectiveOperationException => None }
}

object JobRunner {
  /** The loader of the jars given to spark-submit (--jars, --packages). */
  def loader: ClassLoader = Option(Thread.currentThread.getContextClassLoader).getOrElse(getClass.getClassLoader)

  /** JSON values as a Scala job expects them: objects as immutable Maps, arrays as Lists. */
  def toScala(value: Any): Any = value match {
    case m: java.util.Map[_, _] => m.asScala.map { case (k, v) => k.toString -> toScala(v) }.toMap
    case l: java.util.List[_] => l.asScala.map(toScala).toList
    case other => other
  }
}
