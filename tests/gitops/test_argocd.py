"""Argo CD Application roots: source.path with the source's kustomize options,
written into the kustomization as ``kustomize edit`` writes them."""

from __future__ import annotations

import pytest

from krmcheck.resource.errors import BuildError
from tests.gitops.conftest import Repo, dedent

URL = "https://github.com/org/repo"


def app(kustomize: str = "", path: str = "app") -> str:
    options = "".join(f"      {line}\n" for line in dedent(kustomize).splitlines())
    return dedent(f"""
        apiVersion: argoproj.io/v1alpha1
        kind: Application
        metadata:
          name: web
          namespace: argocd
        spec:
          project: default
          source:
            repoURL: {URL}.git
            path: {path}
        """) + ("    kustomize:\n" + options if options else "")


DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx:1.25
"""


def test_kustomize_options(repo: Repo) -> None:
    repo.write("argocd/web.yaml", app("""
        namePrefix: prod-
        nameSuffix: -v2
        namespace: shop
        commonLabels:
          env: prod
        commonAnnotations:
          owner: web-team
        images:
        - nginx=registry.example/nginx:1.27
        replicas:
        - name: web
          count: "4"
        """))
    repo.write("app/kustomization.yaml", "namePrefix: base-\nresources:\n- deployment.yaml\n")
    repo.write("app/deployment.yaml", DEPLOYMENT)
    assert repo.yaml("argocd:web", urls=(URL,)) == dedent("""
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          annotations:
            owner: web-team
          labels:
            env: prod
          name: prod-web-v2
          namespace: shop
        spec:
          replicas: 4
          selector:
            matchLabels:
              app: web
              env: prod
          template:
            metadata:
              annotations:
                owner: web-team
              labels:
                app: web
                env: prod
            spec:
              containers:
              - image: registry.example/nginx:1.27
                name: web
        """)


def test_image_options_point_at_the_application(repo: Repo) -> None:
    repo.write("argocd/web.yaml", app("""
        images:
        - nginx:1.27
        """))
    repo.write("app/kustomization.yaml", "resources:\n- deployment.yaml\n")
    repo.write("app/deployment.yaml", DEPLOYMENT)
    [res] = repo.render("argocd:web", urls=(URL,)).resources
    image = res.node.mapping("spec").mapping("template").mapping("spec").sequence(  # type: ignore[union-attr]
        "containers").items[0].items["image"]  # type: ignore[union-attr]
    assert image.value == "nginx:1.27"
    assert (image.origin.path, image.origin.line) == ("argocd/web.yaml", 13)


def test_a_directory_application(repo: Repo) -> None:
    repo.write("argocd/web.yaml", app(path="manifests"))
    repo.write("manifests/deployment.yaml", DEPLOYMENT)
    repo.write("manifests/nested/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nested\n")
    assert [r.name for r in repo.render("argocd:web", urls=(URL,)).resources] == ["web"]
    repo.write("argocd/web.yaml", app(path="manifests") + "    directory:\n      recurse: true\n")
    assert sorted(r.name for r in repo.render("argocd:web", urls=(URL,)).resources) == ["nested", "web"]


def test_an_object_two_files_of_a_directory_application_define_is_a_warning(repo: Repo) -> None:
    # Argo CD reads a plain directory's files, keeps the last copy of an
    # object given twice and sets a RepeatedResourceWarning condition; it
    # refuses nothing, so neither does the build; a kustomization would
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: route\ndata:\n  host: {}\n"
    repo.write("argocd/web.yaml", app(path="manifests"))
    repo.write("manifests/deployment.yaml", DEPLOYMENT)
    repo.write("manifests/a-route.yaml", cm.format("old"))
    repo.write("manifests/b-route.yaml", cm.format("new"))
    rendered = repo.render("argocd:web", urls=(URL,))
    assert sorted((r.kind, r.name) for r in rendered.resources) == [("ConfigMap", "route"), ("Deployment", "web")]
    [route] = [r for r in rendered.resources if r.kind == "ConfigMap"]
    assert route.node.to_data()["data"] == {"host": "new"}
    [problem] = rendered.problems
    assert (problem.severity, problem.origin.path, problem.origin.line) == ("warning", "manifests/a-route.yaml", 1)
    assert problem.message == ("ConfigMap route appears 2 times among the application's files (also "
                               "manifests/b-route.yaml:1): Argo CD applies the last one and reports a "
                               "RepeatedResourceWarning")
    repo.write("manifests/kustomization.yaml", "resources:\n- a-route.yaml\n- b-route.yaml\n")
    with pytest.raises(BuildError, match="already registered id: ConfigMap route"):
        repo.render("argocd:web", urls=(URL,))


def test_objects_without_a_namespace_go_to_the_destination_namespace(repo: Repo) -> None:
    repo.write("argocd/web.yaml", app() + "  destination:\n    server: https://kubernetes.default.svc\n"
                                          "    namespace: shop\n")
    repo.write("app/kustomization.yaml", "resources:\n- deployment.yaml\n- ns.yaml\n")
    repo.write("app/deployment.yaml", DEPLOYMENT)
    repo.write("app/ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n")
    rendered = {r.kind: r for r in repo.render("argocd:web", urls=(URL,)).resources}
    assert rendered["Deployment"].namespace == "shop"
    origin = rendered["Deployment"].node.mapping("metadata").items["namespace"].origin
    assert (origin.path, origin.line) == ("argocd/web.yaml", 13)  # destination.namespace
    assert rendered["Namespace"].namespace == ""  # cluster-scoped: left alone


def test_a_directory_application_leaves_out_what_its_exclude_matches(repo: Repo) -> None:
    # Argo CD matches include and exclude against the path relative to the
    # directory; `*` spans directories, `{a,b}` gives alternatives
    repo.write("manifests/deployment.yaml", DEPLOYMENT)
    repo.write("manifests/old/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: old\n")
    repo.write("manifests/extra.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n")
    directory = "    directory:\n      recurse: true\n"
    repo.write("argocd/web.yaml", app(path="manifests") + directory + "      exclude: 'old/*'\n")
    assert sorted(r.name for r in repo.render("argocd:web", urls=(URL,)).resources) == ["extra", "web"]
    repo.write("argocd/web.yaml", app(path="manifests") + directory + "      exclude: '{old/*,extra.yaml}'\n")
    assert [r.name for r in repo.render("argocd:web", urls=(URL,)).resources] == ["web"]
    repo.write("argocd/web.yaml", app(path="manifests") + directory + "      include: '*/cm.yaml'\n")
    assert [r.name for r in repo.render("argocd:web", urls=(URL,)).resources] == ["old"]


def test_applications_an_app_of_apps_leaves_out_are_not_applied(repo: Repo) -> None:
    # the root Application reads apps/ (not below it, and it excludes
    # archived/*): the archived Applications name paths long gone
    root = app(path="apps").replace("name: web", "name: root") + "    directory:\n      exclude: 'archived/*'\n"
    repo.write("root-app.yaml", root)
    repo.write("apps/web.yaml", app(path="manifests"))
    repo.write("manifests/deployment.yaml", DEPLOYMENT)
    repo.write("apps/archived/old.yaml", app(path="gone").replace("name: web", "name: old"))
    found = repo.found(urls=(URL,))
    assert sorted(r.name for r in found.roots) == ["argocd:root", "argocd:web"]
    [(note, where)] = [n for n in found.notes if "leaves them out" in n[0]]
    assert note.startswith("1 Argo CD object lies") and where.path == "apps/archived/old.yaml"
    assert repo.top / "apps/archived/old.yaml" in found.replaced  # nor checked as a plain file
    # with directory.recurse and no exclude, the root applies it: its missing path is the root's error
    repo.write("root-app.yaml", root.replace("exclude: 'archived/*'", "recurse: true"))
    found = repo.found(urls=(URL,))
    assert "argocd:old" in {r.name for r in found.roots}
    assert not [n for n in found.notes if "leaves them out" in n[0]]


def test_two_bootstrap_applications_side_by_side_are_both_applied(repo: Repo) -> None:
    # each reads the whole repository for one kind of file, so each lies where
    # the other leaves it out; neither is applied by the other: both are the
    # repository's entry points, applied by hand
    def root(name: str, include: str) -> str:
        return (app(path=".").replace("name: web", f"name: {name}")
                + f"    directory:\n      recurse: true\n      include: '{include}'\n")

    repo.write("root-apps.yaml", root("root-apps", "**/application.yaml"))
    repo.write("root-projects.yaml", root("root-projects", "**/appproject.yaml"))
    repo.write("apps/web/application.yaml", app(path="manifests"))
    repo.write("manifests/deployment.yaml", DEPLOYMENT)
    found = repo.found(urls=(URL,))
    assert sorted(r.name for r in found.roots) == ["argocd:root-apps", "argocd:root-projects", "argocd:web"]
    assert not [n for n in found.notes if "leaves them out" in n[0]]


def test_roots_an_application_excludes_by_name_are_not_checked(tmp_path) -> None:
    # the root Application reads the repository for Applications and
    # excludes retired/**: the retired kustomization no Application renders is
    # not applied, whatever it holds
    from tests.checkrun import check, write

    root = (app(path=".").replace("name: web", "name: root")
            + "    directory:\n      recurse: true\n      include: '**/application.yaml'\n"
              "      exclude: 'retired/**'\n")
    write(tmp_path, ".krmcheck.yaml", f"gitops:\n  repo-urls: [{URL}]\n")
    write(tmp_path, "root.yaml", root)
    write(tmp_path, "apps/web/application.yaml", app(path="manifests"))
    write(tmp_path, "manifests/kustomization.yaml", "resources: [deployment.yaml]\n")
    write(tmp_path, "manifests/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "retired/old/kustomization.yaml", "resources: [gone.yaml]\n")
    write(tmp_path, "retired/loose.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n")
    run = check(tmp_path)
    assert run.code == 0, run.report["defects"]
    [note] = [n for n in run.report["notes"] if "excludes them" in n["message"]]
    assert note["message"].startswith("2 roots lie where an Application of the repository excludes them "
                                      "(argocd:root reads . with directory.exclude 'retired/**'")
    assert note["path"] == "root.yaml"
    # --roots all checks every kustomization: the missing file is an error again
    assert check(tmp_path, "--roots", "all").code == 2
    # an Application that renders it makes it applied, exclude or not
    write(tmp_path, "apps/old/application.yaml",
          app(path="retired/old").replace("name: web", "name: old"))
    built = [d for d in check(tmp_path).report["defects"] if d["validator"] == "build"]
    assert [(d["path"], d["severity"]) for d in built] == [("retired/old/kustomization.yaml", "error")]
    (tmp_path / "apps/old/application.yaml").unlink()
    # an exclude of kustomization files only: Argo CD applies the files beside
    # them, so the root is not left out by name
    write(tmp_path, "root.yaml", root.replace("retired/**", "**/kustomization.yaml"))
    assert check(tmp_path).code == 2


def test_a_helm_application_whose_path_is_gone_is_an_error_at_the_path(tmp_path) -> None:
    # a clean-up deleted chart/: Argo CD cannot render the application, with
    # or without --enable-helm
    from tests.checkrun import check, write

    write(tmp_path, ".krmcheck.yaml", f"gitops:\n  repo-urls: [{URL}]\n")
    write(tmp_path, "argocd/web.yaml", app(path="chart") + "    helm:\n      releaseName: web\n")
    run = check(tmp_path)
    built = [(d["path"], d["line"], d["severity"]) for d in run.report["defects"] if d["validator"] == "build"]
    assert built == [("argocd/web.yaml", 10, "error")]
    [message] = [d["message"] for d in run.report["defects"] if d["validator"] == "build"]
    assert message == "application path does not exist: chart"
    assert not [d for d in run.report["defects"] if "--enable-helm" in d["message"]]
    # with the chart there, it is a chart not rendered without --enable-helm
    write(tmp_path, "chart/Chart.yaml", "apiVersion: v2\nname: web\nversion: 0.1.0\n")
    run = check(tmp_path)
    assert not [d for d in run.report["defects"] if d["severity"] == "error"]
    assert [d for d in run.report["defects"] if "--enable-helm" in d["message"]]


def test_the_repository_argo_cd_build_options_lift_the_load_restrictor(repo: Repo) -> None:
    # a base that reads a script beside it: Argo CD builds it only because
    # the repository's argocd-cm gives --load-restrictor LoadRestrictionsNone
    repo.write("argocd/web.yaml", app(path="app/base"))
    repo.write("app/base/kustomization.yaml", "configMapGenerator:\n- name: script\n  files:\n  - ../scripts/run.sh\n")
    repo.write("app/scripts/run.sh", "echo hello\n")
    # no Argo CD configuration in the repository: the Argo CD that renders it
    # is configured elsewhere, and no restrictor is given
    assert repo.root("argocd:web", urls=(URL,)).restrictor == ""
    # its argocd-cm without build options: kustomize's default
    repo.write("argocd-install/argocd-cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\n"
                                                "data:\n  url: https://argocd.example.com\n")
    assert repo.root("argocd:web", urls=(URL,)).restrictor == "LoadRestrictionsRootOnly"
    repo.write("argocd-install/argocd-cm.yaml", dedent("""
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: argocd-cm
        data:
          kustomize.buildOptions: "--enable-helm --load-restrictor LoadRestrictionsNone"
        """))
    root = repo.root("argocd:web", urls=(URL,))
    assert root.restrictor != "LoadRestrictionsRootOnly"
    [cm] = repo.render("argocd:web", urls=(URL,)).resources
    assert cm.kind == "ConfigMap" and cm.name.startswith("script-")
    # the Argo CD chart's values say it the same way (configs.cm)
    repo.write("argocd-install/argocd-cm.yaml", "configs:\n  cm:\n    kustomize.buildOptions: --load-restrictor=LoadRestrictionsNone\n")
    assert repo.root("argocd:web", urls=(URL,)).restrictor != "LoadRestrictionsRootOnly"


def test_an_application_reading_outside_its_path_is_policy_where_argo_cd_is_configured_elsewhere(tmp_path) -> None:
    # the repository holds no Argo CD configuration: whether its Argo CD lifts
    # the load restrictor is not shown, so the application is built with it
    # lifted within the repository and the run gives one warning; where the
    # repository's argocd-cm keeps kustomize's default, it is a build error
    from tests.checkrun import check, write

    write(tmp_path, ".krmcheck.yaml", f"gitops:\n  repo-urls: [{URL}]\n")
    write(tmp_path, "argocd/web.yaml", app(path="app/base"))
    write(tmp_path, "app/base/kustomization.yaml", "configMapGenerator:\n- name: script\n  files:\n"
                                                   "  - ../scripts/run.sh\n")
    write(tmp_path, "app/scripts/run.sh", "echo hello\n")
    run = check(tmp_path)
    assert not [d for d in run.report["defects"] if d["severity"] == "error"]
    [policy] = [d for d in run.report["defects"] if d["validator"] == "load-restrictor"]
    assert policy["severity"] == "warning" and "argocd:web" in policy["message"]
    write(tmp_path, "argocd-install/argocd-cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
                                                     "  name: argocd-cm\ndata: {url: https://argocd.example.com}\n")
    built = [d for d in check(tmp_path).report["defects"] if d["validator"] == "build"]
    assert [(d["path"], d["severity"]) for d in built] == [("app/base/kustomization.yaml", "error")]
    assert "builds only with LoadRestrictionsNone" in built[0]["message"]


def test_an_application_whose_name_holds_a_fill_in_marker_is_a_template(tmp_path) -> None:
    # _templates/backstage.yaml, to copy per environment: its value file
    # values/<env>.yaml is named when <env> is filled in, so it is not rendered
    from tests.checkrun import check, write

    write(tmp_path, ".krmcheck.yaml", f"gitops:\n  repo-urls: [{URL}]\n")
    for name in ("<env>-web", "dev-web"):
        folder = "_templates" if name.startswith("<") else "apps"
        write(tmp_path, f"argocd/{folder}/web.yaml",
              app(path="chart").replace("name: web", f"name: {name}")
              + "    helm:\n      valueFiles:\n      - values/<env>.yaml\n")
    write(tmp_path, "chart/Chart.yaml", "apiVersion: v2\nname: web\nversion: 0.1.0\n")
    run = check(tmp_path)
    roots = [r["root"] for r in run.report["roots"]]
    assert "argocd:<env>-web" not in roots and "argocd:dev-web" in roots
    errors = [(d["path"], d["severity"]) for d in run.report["defects"] if d["severity"] == "error"]
    # the copy filled in for dev that still names values/<env>.yaml is judged
    assert errors == [("argocd/apps/web.yaml", "error")]


def test_an_application_named_with_a_variables_name_is_a_template(tmp_path) -> None:
    # services/_template/apps/SERVICE_NAME-dev.yaml, to copy and fill in: its
    # path services/SERVICE_NAME/overlays/dev exists once it is; a name whose
    # capitals are no variable's spelling (a lone word: WEB-dev) is rendered
    from tests.checkrun import check, write

    write(tmp_path, ".krmcheck.yaml", f"gitops:\n  repo-urls: [{URL}]\n")
    for name, folder in (("SERVICE_NAME-dev", "_template"), ("WEB-dev", "apps"), ("Web-prod", "prod")):
        write(tmp_path, f"services/{folder}/apps/app.yaml",
              app(path="services/SERVICE_NAME/overlays/dev").replace("name: web", f"name: {name}"))
    run = check(tmp_path)
    roots = [r["root"] for r in run.report["roots"]]
    assert "argocd:SERVICE_NAME-dev" not in roots and {"argocd:WEB-dev", "argocd:Web-prod"} <= set(roots), roots
    # (the two rendered copies name a path that does not exist, and are no valid names)
    assert {d["path"] for d in run.report["defects"] if d["severity"] == "error"} == {
        "services/apps/apps/app.yaml", "services/prod/apps/app.yaml"}


def test_an_application_path_in_a_git_submodule_not_fetched_is_not_checked(tmp_path) -> None:
    # Argo CD's repo server checks submodules out with the repository; a
    # clone without --recurse-submodules leaves charts/ empty, so the paths
    # are another repository's: a warning each, for a Helm and a plain
    # application; in a submodule that is fetched a missing path is an error
    from tests.checkrun import check, write

    write(tmp_path, ".krmcheck.yaml", f"gitops:\n  repo-urls: [{URL}]\n")
    write(tmp_path, ".gitmodules", '[submodule "charts"]\n\tpath = charts\n\turl = https://example.com/charts\n'
                                   '[submodule "apps"]\n\tpath = apps\n\turl = https://example.com/apps\n')
    (tmp_path / "charts").mkdir()
    write(tmp_path, "apps/README.md", "fetched\n")
    write(tmp_path, "argocd/web.yaml", app(path="charts/charts/web") + "    helm:\n      releaseName: web\n")
    write(tmp_path, "argocd/api.yaml", app(path="charts/api").replace("name: web", "name: api"))
    write(tmp_path, "argocd/db.yaml", app(path="apps/db").replace("name: web", "name: db"))
    run = check(tmp_path)
    errors = [(d["path"], d["message"]) for d in run.report["defects"] if d["severity"] == "error"]
    assert errors == [("argocd/db.yaml", "rendering argocd:db: application path does not exist: apps/db")]
    written = sorted((d["path"], d["line"]) for d in run.report["defects"] if d["validator"] == "written")
    assert written == [("argocd/api.yaml", 10), ("argocd/web.yaml", 10)]
    assert all("git submodule charts (.gitmodules)" in d["message"]
               for d in run.report["defects"] if d["validator"] == "written")
