"""A real pyspark Spark Connect client driven over stdin, for test/e2e/spark-connect.test.ts and bench/connect.ts.

Each stdin line is a JSON command; each answer one JSON line on stdout:
  {"op": "connect", "url": "sc://..."}   a new SparkSession (the previous one stopped), a short retry policy
  {"op": "run", "code": "..."}           exec with `spark` in scope; answers {"ok": true, "result": <result>}
                                         or {"ok": false, "error": "<type>", "message": "...", "code": "<grpc status>"}
  {"op": "stop"}                         stops the session
The server's certificate comes from GRPC_DEFAULT_SSL_ROOTS_FILE_PATH (the gateway's self-signed one in tests).
"""
import json
import sys
import time
import traceback

from pyspark.sql import SparkSession

# pyspark's default retries UNAVAILABLE for minutes (15 tries, up to 60 s apart); tests want an answer within ~5 s.
RETRY = {"max_retries": 5, "backoff_multiplier": 2.0, "initial_backoff": 200, "max_backoff": 2000, "jitter": 50, "min_jitter_threshold": 2000}

spark = None
scope = {}


def plain(o):
    # numpy scalars (count() and pandas give them) as Python values; anything else as text.
    return o.item() if hasattr(o, "item") else str(o)


def answer(obj):
    sys.stdout.write(json.dumps(obj, default=plain) + "\n")
    sys.stdout.flush()


def grpc_code(e):
    for x in (e, getattr(e, "__cause__", None), getattr(e, "__context__", None)):
        code = getattr(x, "code", None)
        if callable(code):
            try:
                return str(code())
            except Exception:  # noqa: BLE001
                pass
    return None


for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    cmd = json.loads(line)
    try:
        if cmd["op"] == "connect":
            if spark is not None:
                spark.stop()
            SparkSession.builder._options.clear()
            t = time.time()
            spark = SparkSession.builder.remote(cmd["url"]).create()
            spark._client._retry_policy.update(RETRY)
            scope = {"spark": spark}
            answer({"ok": True, "result": {"sessionId": spark._client._session_id, "ms": (time.time() - t) * 1000}})
        elif cmd["op"] == "run":
            scope["result"] = None
            exec(cmd["code"], scope)
            answer({"ok": True, "result": scope.get("result")})
        elif cmd["op"] == "stop":
            if spark is not None:
                spark.stop()
            spark = None
            answer({"ok": True, "result": None})
    except Exception as e:  # noqa: BLE001
        sys.stderr.write(traceback.format_exc())
        answer({"ok": False, "error": type(e).__name__, "message": str(e), "code": grpc_code(e)})
if spark is not None:
    spark.stop()
