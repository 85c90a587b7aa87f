"""One module per subcommand (``krmcheck check``, ``build``, ``blame``...),
each taking parsed arguments and returning its exit code; ``krmcheck/cli.py``
dispatches to them."""
