# seqid-harness: starts SecantusDB from the project-local install.
# Usage: python3 -s -c <this file's text> INSTALL_DIR [secantusd-py arguments...]
# Equivalent to the `secantusd-py` console script (entry point secantus.cli:main)
# run with INSTALL_DIR first on sys.path.
import sys

sys.path.insert(0, sys.argv.pop(1))
sys.argv[0] = "secantusd-py"
from secantus.cli import main  # noqa: E402

sys.exit(main())
