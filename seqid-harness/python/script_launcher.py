# seqid-harness: runs a Python script with a project-local pip install (e.g.
# MongoEngine's) on sys.path, as `python3 SCRIPT ARGS...` would run it.
# Usage: python3 -s -c <this file's text> INSTALL_DIR SCRIPT [ARGS...]
# The install directory goes first on sys.path; -s keeps the user's own
# site-packages out, so the pinned versions are the ones imported.
import os
import runpy
import sys

sys.path.insert(0, sys.argv.pop(1))
sys.argv.pop(0)  # "-c"
sys.path.insert(1, os.path.dirname(os.path.abspath(sys.argv[0])))
runpy.run_path(sys.argv[0], run_name="__main__")
