"""`python -m hpcscope.cli` is the `hpcscope` command."""

from hpcscope.cli import main

main()
