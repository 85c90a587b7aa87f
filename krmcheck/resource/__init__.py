"""The resource model the build and the function runtime share: a
:class:`~krmcheck.resource.resource.Resource` and its ids (``resid.py``),
build errors with their location (``errors.py``) and file access under the
load restrictor (``files.py``)."""
