"""`python -m tidemark ...` is the `tidemark` command (for environments whose scripts folder is not on
the PATH)."""

import subprocess
import sys

from ._cli import binary


def main() -> int:
    return subprocess.call([binary(), *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
