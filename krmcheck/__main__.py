"""``python -m krmcheck`` runs the command line."""

from krmcheck.cli import run

run()
