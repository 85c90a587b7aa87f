"""The check as stages, in the order they run, over one
:class:`~krmcheck.pipeline.run.Run`: select the roots (``select``), render
(``render``), validate (``validate``), locate each root's Results
(``root``), in worker processes where there are many (``workers``), triage
(``triage``), report (``report``); ``check`` strings them together and
``compare`` (the pull-request view) calls them twice."""
