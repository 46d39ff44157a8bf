# seqid-harness: starts nx-27017 from the project-local install.
# Usage: python3 -s -c <this file's text> INSTALL_DIR [nx-27017 arguments...]
# Equivalent to the `nx-27017` console script (entry point nx_27017.nx_27017:main)
# run with INSTALL_DIR on sys.path, except that nx-27017's per-command INFO log
# lines ("Calling db.command with: ...", two per command) are dropped unless
# SEQID_NX_VERBOSE=1: in benchmarks they would fill the log, and they would bury
# the warnings and errors in the log tail that seqid-harness shows on failure.
# Warnings, errors and the startup lines are kept.
import logging
import os
import sys

sys.path.insert(0, sys.argv.pop(1))

if os.environ.get("SEQID_NX_VERBOSE", "") in ("", "0"):

    class _Quiet(logging.Filter):
        def filter(self, record):
            return record.levelno >= logging.WARNING or str(record.msg).startswith(
                ("Starting", "Listening")
            )

    logging.getLogger("nx_27017").addFilter(_Quiet())

sys.argv[0] = "nx-27017"
from nx_27017.nx_27017 import main  # noqa: E402

sys.exit(main())
