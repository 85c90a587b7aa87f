"""The KRM function runtime: what runs the plugin configs that kustomize
does not build in (``loader.py``, the build's ``ExternalPlugins``), the
wire formats (``resource_list.py``), the build state a plugin sees
(``build_state.py``), its output adopted back with provenance
(``adoption.py``), KRM functions (``krm.py``),
legacy exec plugins (``exec_plugin.py``), function catalogs
(``catalog/``), validator functions (``external.py``, ``serve.py``).
"""
