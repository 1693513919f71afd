"""Entry point of an interactive group's Spark driver: `spark-submit ... runner/runner.py`.

Everything lives in the spark_runner package next to this file; see runner/README.md.
"""

import os
import sys

from spark_runner.main import main

# The script's own directory is sys.path[0]; drop it now that the runner is imported, so a user job
# module named e.g. `runner` or `tests` resolves to the user's code, not to files of this directory.
if sys.path and os.path.realpath(sys.path[0]) == os.path.dirname(os.path.realpath(__file__)):
    del sys.path[0]

if __name__ == "__main__":
    sys.exit(main())
