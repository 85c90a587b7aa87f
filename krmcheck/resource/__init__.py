"""The resource model the build and the function runtime share: a
:class:`~krmcheck.resource.resource.Resource` and its ids (``resid.py``),
build errors with their location (``errors.py``), file access under the
load restrictor (``files.py``) and the internal annotations items carry
between functions (``wire.py``)."""
