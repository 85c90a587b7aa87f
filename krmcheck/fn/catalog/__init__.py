"""Function catalogs (KEP-2906): find how to run a function config that
names no runtime.

A kustomization lists catalogs under ``catalogs:`` (a local file, an
http(s) URL, a git reference or an ``oci://`` reference). A catalog
(``kind: Catalog`` or ``KRMFunctionCatalog``, apiVersion
``config.kubernetes.io/v1alpha1``; schema in ``schema.json``) lists
functions by group and kind, and for each version a container image and/or
executables per platform. kustomize never shipped this; the KEP is the spec,
and where it leaves a choice open the choice is written down here:

* A catalog reference is local to its kustomization layer (a base's
  catalogs do not serve the overlay, nor the reverse).
* An explicit runtime on the config (``config.kubernetes.io/function``)
  wins; otherwise the layer's catalogs are searched in the order listed and,
  inside a catalog, functions in the order written: the first whose group,
  kind and version match runs the config.
* Trust is explicit for every catalog, local files included: a pull request
  can add or edit a catalog file as easily as a remote one, and trusting a
  catalog means downloading and running what it names. A reference that
  ``--trusted-catalog`` does not name is an error as soon as its layer is
  built, before anything of that layer runs or is fetched. The value must
  name the catalog as the kustomization does: the same URL or reference, or
  a path to the same file.
* Nothing goes over the network without ``--network`` (as for remote
  resources); plain ``http://`` is refused for catalogs except on loopback,
  since a catalog is what the digests come from. Executables may come over
  http because their sha256 is checked.
* An exec runtime for this machine's os/arch is preferred to a container
  (it needs no container engine and is pinned by its sha256).

The package's modules: ``model`` (the parsed catalog), ``parse`` (a
catalog file read and validated into the model), ``sources`` (catalog
references classified and fetched from a file, a URL, git or OCI),
``install`` (an executable downloaded, verified and unpacked into the
cache), ``resolve`` (a layer's trusted catalogs and the function a config
runs) and ``view`` (what ``krmcheck catalog view`` prints). What every
build is given, the run's :class:`~krmcheck.fn.catalog_context.CatalogContext`,
lives outside the package so that a build whose kustomizations list no
catalog imports none of it.
"""
