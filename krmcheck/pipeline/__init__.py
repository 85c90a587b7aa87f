"""The check as stages over one :class:`~krmcheck.pipeline.run.Run`."""
