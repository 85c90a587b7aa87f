"""images: new names, tags and digests for container images, written by the
images entry's line."""

from __future__ import annotations

import pytest

from krmcheck.kustomize.builtins import images
from krmcheck.kustomize.builtins.images import ImageEntry
from krmcheck.kustomize.fieldspec import FieldSpec
from krmcheck.kustomize.transformerconfig import TransformerConfig
from krmcheck.resource.errors import BuildError
from krmcheck.resource.resource import Resource
from krmcheck.tree.origin import UNKNOWN
from tests.kustomize.builtins.inline import KUSTOMIZATION, RESOURCES, at, entry, kustomization, node, rendered, \
    resources

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      initContainers:
      - name: init
        image: busybox
      containers:
      - name: web
        image: nginx:1.25
      - name: sidecar
        image: nginx-exporter:0.11
"""

CONTAINERS = ("spec", "template", "spec", "containers")


def apply(text: str, images_field: str, config: TransformerConfig | None = None) -> list[Resource]:
    """The resources of ``text`` after each entry of an ``images:`` field, in order."""
    res = resources(text)
    k = kustomization(images_field)
    listed = k.sequence("images")
    for i in range(len(listed or ())):
        images.apply(res, entry(k, "images", i), config)
    return res




def image_entry(name: str, new_name: str = "", new_tag: str = "", digest: str = "") -> ImageEntry:
    return ImageEntry(name, new_name, new_tag, digest, UNKNOWN)


@pytest.mark.parametrize(("ref", "matches"), [
    ("nginx", True), ("nginx:1.25", True), ("nginx@sha256:abc", True), ("nginx:1.25@sha256:abc", True),
    ("nginx-exporter:0.11", False), ("library/nginx", False), ("nginx:bad tag", False),
])
def test_an_entry_matches_its_name_with_any_tag_or_digest(ref: str, matches: bool) -> None:
    assert image_entry("nginx").matches(ref) is matches


@pytest.mark.parametrize(("entry_", "ref", "new"), [
    (image_entry("nginx", new_name="ghcr.io/acme/nginx"), "nginx:1.25", "ghcr.io/acme/nginx:1.25"),
    (image_entry("nginx", new_tag="1.27"), "nginx:1.25@sha256:abc", "nginx:1.27"),
    (image_entry("nginx", digest="sha256:def"), "nginx:1.25", "nginx@sha256:def"),
    (image_entry("nginx", new_tag="1.27", digest="sha256:def"), "nginx", "nginx:1.27@sha256:def"),
    (image_entry("nginx"), "nginx:1.25", "nginx:1.25"),
])
def test_rewrite(entry_: ImageEntry, ref: str, new: str) -> None:
    assert entry_.rewrite(ref) == new


def test_an_entry_is_decided_by_its_last_value_line() -> None:
    k = kustomization("images:\n- name: nginx\n  newName: my/nginx\n  newTag: \"1.27\"\n")
    parsed = ImageEntry.from_node(entry(k, "images"))
    assert (parsed.name, parsed.new_name, parsed.new_tag, parsed.digest) == ("nginx", "my/nginx", "1.27", "")
    assert (parsed.origin.line, parsed.origin.col) == (4, 3)


# --- the transformer -------------------------------------------------------------------------

def test_a_new_tag_is_written_by_the_new_tag_line_and_the_base_line_joins_the_trail() -> None:
    res = apply(DEPLOYMENT, "images:\n- name: nginx\n  newTag: \"1.27\"\n")
    image = node(res[0], *CONTAINERS, "0", "image")
    assert image.to_data() == "nginx:1.27"
    assert at(image) == (KUSTOMIZATION, 3, 3, "kustomization")
    assert [(o.path, o.line) for o in image.trail] == [(RESOURCES, 13)]


def test_only_matching_images_change() -> None:
    res = apply(DEPLOYMENT, "images:\n- name: nginx\n  newTag: \"1.27\"\n")
    sidecar = node(res[0], *CONTAINERS, "1", "image")
    assert sidecar.to_data() == "nginx-exporter:0.11"
    assert at(sidecar) == (RESOURCES, 15, 9, "resource") and sidecar.trail == ()


def test_init_containers_change_too() -> None:
    res = apply(DEPLOYMENT, "images:\n- name: busybox\n  newName: ghcr.io/acme/busybox\n  digest: sha256:0f\n")
    init = node(res[0], "spec", "template", "spec", "initContainers", "0", "image")
    assert init.to_data() == "ghcr.io/acme/busybox@sha256:0f"
    assert at(init)[1:3] == (4, 3)  # the digest line, the last that decides


def test_an_unchanged_value_still_records_the_entry_as_its_writer() -> None:
    res = apply(DEPLOYMENT, "images:\n- name: nginx\n  newTag: \"1.25\"\n")
    image = node(res[0], *CONTAINERS, "0", "image")
    assert image.to_data() == "nginx:1.25"
    assert at(image)[:2] == (KUSTOMIZATION, 3) and len(image.trail) == 1


def test_containers_are_found_anywhere_in_any_kind() -> None:
    cronjob = """\
apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: job
            image: nginx
"""
    res = apply(cronjob, "images:\n- name: nginx\n  newTag: \"1.27\"\n")
    assert "image: nginx:1.27\n" in rendered(res)


def test_the_images_table_of_the_config_reaches_other_fields() -> None:
    widget = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  runner: nginx:1.25\n"
    config = TransformerConfig(images=(FieldSpec(("spec", "runner")),))
    res = apply(widget, "images:\n- name: nginx\n  newTag: \"1.27\"\n", config)
    assert node(res[0], "spec", "runner").to_data() == "nginx:1.27"
    assert apply(widget, "images:\n- name: nginx\n  newTag: \"1.27\"\n")[0].node.to_data()["spec"] == \
        {"runner": "nginx:1.25"}  # not in the default table


def test_entries_apply_in_order() -> None:
    res = apply(DEPLOYMENT, "images:\n- name: nginx\n  newName: web\n- name: web\n  newTag: v2\n")
    assert node(res[0], *CONTAINERS, "0", "image").to_data() == "web:v2"


def test_an_invalid_image_name_is_an_error_at_its_name_line() -> None:
    with pytest.raises(BuildError) as e:
        apply(DEPLOYMENT, "images:\n- name: nginx\n  newTag: v1\n- name: '[nginx'\n  newTag: v2\n")
    assert e.value.message == "images: '[nginx' is not a valid image name"
    assert e.value.location is not None and tuple(e.value.location) == (KUSTOMIZATION, 4, 3)


def test_a_shared_resource_whose_images_do_not_match_is_not_copied() -> None:
    base = resources(DEPLOYMENT)[0]
    shared = Resource(base.node.share())
    k = kustomization("images:\n- name: redis\n  newTag: '7'\n")
    images.apply([shared], entry(k, "images"))
    assert shared.node._src is not None  # not looked into: still reading its source
    images.apply([shared], entry(kustomization("images:\n- name: busybox\n  newTag: '1.36'\n"), "images"))
    assert shared.node._src is None  # a match: copied along the way to the image
    assert base.node.to_data()["spec"]["template"]["spec"]["initContainers"][0]["image"] == "busybox"
    assert node(shared, "spec", "template", "spec", "initContainers", "0", "image").value == "busybox:1.36"


NULL_LISTS = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      initContainers:
      volumes:
      containers:
      - name: web
        image: nginx
---
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  initContainers:
  containers:
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: cj
spec:
  jobTemplate:
    spec:
      template:
        spec:
          initContainers:
"""


@pytest.mark.parametrize("name", ["nginx", "redis"])
def test_a_null_container_list_on_a_spec_path_becomes_empty(name: str) -> None:
    # kubectl kustomize: every images entry, matching or not, walks the image
    # field specs and a `containers[]` step turns a null met there into [];
    # the CronJob's lists lie on no default path and stay null
    out = rendered(apply(NULL_LISTS, f"images:\n- name: {name}\n  newTag: '2'\n"))
    assert "      initContainers: []\n      volumes: null\n" in out
    assert "  containers: []\n  initContainers: []\n" in out
    assert "          initContainers: null\n" in out
    assert ("image: nginx:2" in out) is (name == "nginx")


THREE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  template:
    spec:
      containers:
      - {name: a, image: 'nginx:1.0'}
      - {name: b, image: '$(registry)/$(controller)'}
      - {name: c, image: redis}
"""


def test_an_entry_name_is_a_regular_expression_as_kustomize_reads_it() -> None:
    # kubectl: `ngin.` matches nginx, `re(d|x)is` matches redis, and
    # `$(registry)/$(controller)` (a Tekton release's make variables)
    # compiles and matches nothing, not even itself; the build goes on
    res = apply(THREE, "images:\n- name: ngin.\n  newTag: '2.0'\n- name: $(registry)/$(controller)\n"
                       "  newName: x/y\n- name: re(d|x)is\n  newTag: '7'\n")
    images = [node(res[0], *CONTAINERS, str(i), "image").to_data() for i in range(3)]
    assert images == ["nginx:2.0", "$(registry)/$(controller)", "redis:7"]


@pytest.mark.parametrize("name", ["c++", "a(?=b)", "(a)\\1"])
def test_a_name_go_compiles_no_pattern_of_is_an_error(name: str) -> None:
    # Python's expressions accept these; kustomize's (Go, RE2) do not, and it crashes
    with pytest.raises(BuildError) as e:
        apply(THREE, f"images:\n- name: '{name}'\n  newTag: v2\n")
    assert e.value.message == f"images: '{name}' is not a valid image name"
