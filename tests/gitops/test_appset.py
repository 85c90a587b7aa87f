"""Argo CD ApplicationSets expanded as the ApplicationSet controller
expands them (argo-cd applicationset/controllers/template
``GenerateApplications``, generators/list.go, git.go, matrix.go, merge.go,
utils ``Render.Replace``), multi-source Applications, and what is said when
no Application can be told to be this repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from krmcheck.gitops.gotemplate import TemplateError, render
from tests.checkrun import check, write
from tests.gitops.conftest import Repo, dedent

URL = "https://github.com/org/fleet"
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n"


def appset(generators: str, template: str, go: bool = False) -> str:
    gens = "".join(f"  {line}\n" for line in dedent(generators).splitlines())
    tmpl = "".join(f"    {line}\n" for line in dedent(template).splitlines())
    return dedent(f"""
        apiVersion: argoproj.io/v1alpha1
        kind: ApplicationSet
        metadata:
          name: apps
          namespace: argocd
        spec:
          goTemplate: {str(go).lower()}
          generators:
        """) + gens + "  template:\n" + tmpl


def apps(repo: Repo) -> dict[str, Path]:
    return {r.name: r.directory for r in repo.found((URL,)).roots}


def test_git_directories_with_fasttemplate(repo: Repo) -> None:
    """``{{path}}``, ``{{path.basename}}``; ``path.Match`` for the entries
    (``*`` within one directory), ``exclude: true`` takes some out."""
    repo.write("argocd/apps.yaml", appset(f"""
        - git:
            repoURL: {URL}.git
            revision: HEAD
            directories:
            - path: apps/*
            - path: apps/legacy
              exclude: true
        """, """
        metadata:
          name: '{{path.basename}}'
        spec:
          project: default
          source:
            repoURL: https://github.com/org/fleet.git
            path: '{{path}}'
          destination:
            namespace: '{{path.basename}}'
        """))
    for name in ("web", "api", "legacy", "web/nested"):
        repo.write(f"apps/{name}/cm.yaml", CM.format(name=name.replace("/", "-")))
    assert apps(repo) == {"argocd:api": repo.top / "apps/api", "argocd:web": repo.top / "apps/web"}
    [res] = repo.render("argocd:web", (URL,)).resources
    assert res.namespace == "web"  # destination.namespace, from the template


def test_list_generator_points_at_the_element(repo: Repo) -> None:
    repo.write("argocd/apps.yaml", appset("""
        - list:
            elements:
            - cluster: staging
              dir: envs/staging
            - cluster: prod
              dir: envs/prod
        """, f"""
        metadata:
          name: 'app-{{{{cluster}}}}'
        spec:
          source:
            repoURL: {URL}
            path: '{{{{dir}}}}'
          destination:
            namespace: default
        """))
    for env in ("staging", "prod"):
        repo.write(f"envs/{env}/cm.yaml", CM.format(name=env))
    roots = {r.name: r for r in repo.found((URL,)).roots}
    assert sorted(roots) == ["argocd:app-prod", "argocd:app-staging"]
    path = roots["argocd:app-prod"].obj.mapping("spec").mapping("source").items["path"]  # type: ignore[union-attr]
    assert (path.origin.path, path.origin.line) == ("argocd/apps.yaml", 14)  # the element's dir: line
    assert [(o.path, o.line) for o in path.trail] == [("argocd/apps.yaml", 21)]  # the template's


def test_matrix_of_git_files_and_a_list_with_go_templates(repo: Repo) -> None:
    """goTemplate: parameters nested (``.path.basename``, the file's keys),
    sprig functions; the matrix's second generator templated with the first's."""
    repo.write("argocd/apps.yaml", appset(f"""
        - matrix:
            generators:
            - git:
                repoURL: {URL}
                revision: HEAD
                files:
                - path: clusters/**/config.yaml
            - list:
                elements:
                - app: web
                  dir: '{{{{ .path.path }}}}/web'
        """, f"""
        metadata:
          name: '{{{{ .app }}}}-{{{{ .cluster.name | lower }}}}'
        spec:
          source:
            repoURL: {URL}
            path: '{{{{ .dir }}}}'
          destination:
            namespace: '{{{{ default "apps" .cluster.namespace }}}}'
        """, go=True))
    repo.write("clusters/eu/config.yaml", "cluster:\n  name: EU\n  namespace: shop\n")
    repo.write("clusters/us/config.yaml", "cluster:\n  name: US\n")
    for c in ("eu", "us"):
        repo.write(f"clusters/{c}/web/cm.yaml", CM.format(name=c))
    assert apps(repo) == {"argocd:web-eu": repo.top / "clusters/eu/web",
                          "argocd:web-us": repo.top / "clusters/us/web"}
    assert {r.namespace for r in repo.render("argocd:web-us", (URL,)).resources} == {"apps"}
    assert {r.namespace for r in repo.render("argocd:web-eu", (URL,)).resources} == {"shop"}


def test_argo_cds_yaml_functions(repo: Repo) -> None:
    """Argo CD's ``toYaml`` (no newline at the end: a namespace stays one
    word), ``fromYaml`` and ``fromYamlArray`` (applicationset/utils
    template_functions)."""
    repo.write("argocd/apps.yaml", appset(f"""
        - git:
            repoURL: {URL}
            revision: HEAD
            files:
            - path: clusters/*/config.yaml
        """, f"""
        metadata:
          name: '{{{{ (fromYaml .spec).app }}}}-{{{{ fromYamlArray .zones | last }}}}'
        spec:
          source:
            repoURL: {URL}
            path: '{{{{ .path.path }}}}'
          destination:
            namespace: '{{{{ .ns | toYaml }}}}'
        """, go=True))
    repo.write("clusters/eu/config.yaml", "ns: shop\nspec: 'app: web'\nzones: '[a, b]'\n")
    repo.write("clusters/eu/cm.yaml", CM.format(name="eu"))
    assert apps(repo) == {"argocd:web-b": repo.top / "clusters/eu"}
    assert {r.namespace for r in repo.render("argocd:web-b", (URL,)).resources} == {"shop"}


def test_from_yaml_of_what_is_not_a_map_is_an_error() -> None:
    from krmcheck.gitops.appset import _ARGO_FUNCTIONS
    with pytest.raises(TemplateError, match="not a map"):
        render("{{ fromYaml .v }}", {"v": "[1, 2]"}, functions=_ARGO_FUNCTIONS)
    values = render("values: |\n  {{- . | toYaml | nindent 2 }}\n", {"b": 1, "a": "yes"}, functions=_ARGO_FUNCTIONS)
    assert values == 'values: |\n  a: "yes"\n  b: 1\n'


def test_git_files_glob_as_the_controller_is_configured(repo: Repo) -> None:
    """A files pattern is a git pathspec by default (``*`` crosses
    directories); with the controller's --enable-new-git-file-globbing, in
    the repository's Argo CD configuration, a doublestar pattern (``*``
    within one directory, ``**`` across)."""
    repo.write("argocd/apps.yaml", appset(f"""
        - git:
            repoURL: {URL}
            revision: HEAD
            files:
            - path: gates/*.yaml
        """, f"""
        metadata:
          name: '{{{{path.filenameNormalized}}}}'
        spec:
          source:
            repoURL: {URL}
            path: 'apps/{{{{path.filename}}}}'
        """))
    repo.write("gates/web.yaml", "{}\n")
    repo.write("gates/extra/secret.yaml", "{}\n")
    assert set(apps(repo)) == {"argocd:web.yaml", "argocd:secret.yaml"}
    repo.write("argocd/argocd.yaml", "apiVersion: argoproj.io/v1beta1\nkind: ArgoCD\nmetadata:\n  name: gitops\n"
                                     "spec:\n  applicationSet:\n    extraCommandArgs:\n"
                                     "    - '--enable-new-git-file-globbing'\n")
    assert set(apps(repo)) == {"argocd:web.yaml"}
    repo.write("argocd/apps.yaml", (repo.top / "argocd/apps.yaml").read_text().replace("gates/*.yaml", "gates/**/*.yaml"))
    assert set(apps(repo)) == {"argocd:web.yaml", "argocd:secret.yaml"}
    # the argocd-cmd-params-cm key turns it on too
    repo.write("argocd/argocd.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cmd-params-cm\n"
                                     "data:\n  applicationsetcontroller.enable.new.git.file.globbing: 'true'\n")
    repo.write("argocd/apps.yaml", (repo.top / "argocd/apps.yaml").read_text().replace("gates/**/*.yaml", "gates/*.yaml"))
    assert set(apps(repo)) == {"argocd:web.yaml"}


def test_merge_generator(repo: Repo) -> None:
    repo.write("argocd/apps.yaml", appset(f"""
        - merge:
            mergeKeys: [name]
            generators:
            - list:
                elements:
                - {{name: a, dir: base/a}}
                - {{name: b, dir: base/b}}
            - list:
                elements:
                - {{name: b, dir: override/b}}
        """, f"""
        metadata:
          name: '{{{{name}}}}'
        spec:
          source:
            repoURL: {URL}
            path: '{{{{dir}}}}'
          destination:
            namespace: default
        """))
    for d in ("base/a", "override/b"):
        repo.write(f"{d}/cm.yaml", CM.format(name=d.replace("/", "-")))
    assert apps(repo) == {"argocd:a": repo.top / "base/a", "argocd:b": repo.top / "override/b"}


@pytest.mark.parametrize("text, want", [
    ("{{ .path.basename }}", "web"),
    ("{{ index .path.segments 0 }}-{{ .path.basename | upper }}", "apps-WEB"),
    ('{{ if eq .env "prod" }}p{{ else if eq .env "dev" }}d{{ else }}o{{ end }}', "d"),
    ("{{ .missing }}", "<no value>"),  # Go's default missingkey
    ('{{ printf "%s/%s" .env .path.basename }}', "dev/web"),
    ("{{- .env -}} x", "devx"),
])
def test_go_templates(text: str, want: str) -> None:
    data = {"path": {"basename": "web", "segments": ["apps", "web"]}, "env": "dev"}
    assert render(text, data) == want


def test_go_template_missing_key_error() -> None:
    with pytest.raises(TemplateError):
        render("{{ .missing }}", {}, ("missingkey=error",))


def chart_with_values(more_sources: str = "") -> str:
    """A multi-source Application: a chart whose value file is
    ``$values/values/web.yaml`` of this repository (the ``ref: values``
    source), and ``more_sources`` after it."""
    return dedent(f"""
        apiVersion: argoproj.io/v1alpha1
        kind: Application
        metadata:
          name: web
          namespace: argocd
        spec:
          sources:
          - repoURL: https://charts.example.com
            chart: web
            targetRevision: 1.2.3
            helm:
              valueFiles:
              - $values/values/web.yaml
          - repoURL: {URL}
            targetRevision: main
            ref: values
        """) + more_sources + "  destination:\n    namespace: web\n"


def test_multi_source_application_reads_values_of_its_ref_source(repo: Repo) -> None:
    """``sources``: the path source renders, the chart source is rendered
    with it, and its ``$values/...`` value file is read from this checkout
    (the ``ref: values`` source is this repository)."""
    repo.write("argocd/web.yaml", chart_with_values(f"  - repoURL: {URL}\n    path: extra\n"))
    repo.write("values/web.yaml", "replicaCount: 3\n")
    repo.write("extra/cm.yaml", CM.format(name="extra"))
    root = repo.root("argocd:web", (URL,))
    [chart_source] = [r for r in (root, *root.also) if r.helm is not None]
    assert chart_source.helm is not None and chart_source.helm.values.to_data() == {"replicaCount": 3}
    assert repo.top / "values/web.yaml" in root.reads
    rendered = repo.render("argocd:web", (URL,))
    assert [r.name for r in rendered.resources] == ["extra"]  # the chart needs --enable-helm --network
    # the path source's files are checked through the Application, not also plainly
    assert repo.top / "extra/cm.yaml" in repo.found((URL,)).replaced


def test_a_broken_values_file_of_the_ref_source_is_a_finding_at_its_line(repo: Repo) -> None:
    """A ``$values/...`` file with a key given twice: Argo CD's helm fails on
    it; the root is still found, with an error at the repeated key."""
    repo.write("argocd/web.yaml", chart_with_values())
    repo.write("values/web.yaml", "speaker:\n  a: 1\nother: 2\nspeaker:\n  b: 2\n")
    root = repo.root("argocd:web", (URL,))
    [problem] = [p for r in (root, *root.also) for p in r.problems]
    assert (problem.severity, problem.origin.path, problem.origin.line) == ("error", "values/web.yaml", 4)
    assert "speaker" in problem.message
    assert repo.top / "values/web.yaml" in root.reads


def test_without_a_url_for_this_repository_a_note_says_why(tmp_path: Path) -> None:
    """Argo CD names sources by URL only: with no origin remote and no
    gitops.repo-urls nothing can be matched, and the run says so."""
    write(tmp_path, "argocd/web.yaml", dedent(f"""
        apiVersion: argoproj.io/v1alpha1
        kind: Application
        metadata:
          name: web
          namespace: argocd
        spec:
          source:
            repoURL: {URL}
            path: app
          destination:
            namespace: web
        """))
    write(tmp_path, "app/cm.yaml", CM.format(name="web"))
    run = check(tmp_path, ".")
    assert "argocd:web" not in [r["root"] for r in run.report["roots"]]
    [note] = [n for n in run.report["notes"] if "gitops.repo-urls" in n["message"]]
    assert note["path"] == "argocd/web.yaml"
    assert "note: " in run.out and "no origin remote" in run.out
    write(tmp_path, ".krmcheck.yaml", f"gitops:\n  repo-urls: [{URL}]\n")
    run = check(tmp_path, ".")
    assert "argocd:web" in [r["root"] for r in run.report["roots"]]
    assert not [n for n in run.report["notes"] if "gitops.repo-urls" in n["message"]]
