"""The KRM function runtime: what runs the plugin configs that kustomize
does not build in (``loader.py``, the build's ``ExternalPlugins``), the
ResourceList wire format (``runtime.py``), KRM functions (``krm.py``),
legacy exec plugins (``exec_plugin.py``), function catalogs
(``catalog.py``), validator functions (``external.py``, ``serve.py``).
"""
