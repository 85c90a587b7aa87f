"""Findings about ``${...}`` placeholders that nothing substituted.

A value still written ``${VAR}`` after rendering is not what will be
applied: its variable comes later (a clusterctl or envsubst template) or
from an object the repository cannot show (a Flux ``substituteFrom``
Secret encrypted with SOPS). A finding about such a value is not judged:
it is kept as suppressed (``by: placeholder``), and the run says once how
many there were. In a template (outside a controller root) a value that
only holds a placeholder, ``${CLUSTER_NAME}-md-0``, is not judged either:
what the name will be is not known yet; nor is one that holds a
``{{ ... }}`` expression, a format string's ``{name}`` (written bare too,
which YAML reads as a map of one key with no value), a ``[FILL_IN]`` in
capitals or of joined words (which YAML reads as a list of one item), a ``((name))``
variable, a ``<MARKER>`` in capitals, a ``<marker-of-words>`` or a
``<word>`` that is a whole part of the value (``<env>-backstage``), or is
wholly a ``<what to write here>``; nor is a package's stand-in in capitals
that a kpt setter's comment marks (``name: NAME # {"$kpt-set":"name"}``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator, Mapping, Sequence

from krmcheck.locate import Locator
from krmcheck.results import Finding, Result, RootReport, Suppressed
from krmcheck.tree.node import Mapping as Map, Node, Scalar, Sequence as Seq

VALIDATOR = "substitution"  # krmcheck.gitops.VALIDATOR
WHOLE = re.compile(r"\$\{[^{}]*(\$\{[^{}]*\}[^{}]*)*\}\Z")
# A value that is wholly an instruction to replace it: REPLACE-ME, CHANGEME,
# fill_me_in, a placeholder that says so (PLACEHOLDER_SERVICE_ACCOUNT,
# NAME_PLACEHOLDER), says what fills it (REPLACED_BY_SCRIPT), addresses
# the reader (your-tunnel-uuid-here, YOUR_API_KEY, token-goes-here), or
# describes in words the example value to write (example group id 1)
REPLACE_ME = re.compile(r"\A(?i:(?:replace|change|fill|edit)[-_ ]?(?:me|this|it)(?:[-_ ]?in)?|"
                        r"(?:[A-Za-z0-9]+[-_])*placeholder(?:[-_ ][A-Za-z0-9]+)*|"
                        r"(?:replaced|filled|set)[-_ ]by(?:[-_ ][A-Za-z0-9]+)+|"
                        r"your[-_ ](?:[A-Za-z0-9]+[-_ ])*[A-Za-z0-9]+|(?:[A-Za-z0-9]+[-_ ])+(?:goes[-_ ])?here|"
                        r"example(?:[ ][A-Za-z0-9]+){2,})\Z")
# In a template: ${VAR}, {{ expression }}, an envsubst $VARIABLE, a format
# string's {name} (Python's str.format, a Go or shell program's fill-in), a
# ((name)) variable (Concourse, spruce, a sed script's marker), a
# <FILL_IN_MARKER> in capitals or a <fill-in-marker> of joined words
# (<app-name>-secret) anywhere in a value, a <word> that is a whole part of
# the value, between its ends or separators (<env>-backstage,
# values/<env>.yaml; x<b>y is none), REPLACEME or CHANGEME as such a part
# (EXAMPLE.DEV.REPLACEME), a $(variable) (kustomize's vars, Make's,
# a tool's: $(profile-name)), or a value that is wholly <what to write
# here> or REPLACE-ME.
HELD = re.compile(r"\$\{[^{}]+\}|\{\{.*?\}\}|\A<[^<>\n]+>\Z|\$[A-Z_][A-Z0-9_]{2,}\b|" + REPLACE_ME.pattern + "|"
                  r"(?<![{$])\{[A-Za-z_][A-Za-z0-9_]*\}(?!\})|\(\([ \t]*[A-Za-z_][A-Za-z0-9_.-]*[ \t]*\)\)|"
                  r"<[A-Z][A-Z0-9_]{2,}>|<[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)+>|"
                  r"(?:\A|(?<=[-._/:@]))<[A-Za-z][A-Za-z0-9]*>(?=[-._/:@]|\Z)|"
                  r"(?:\A|(?<=[-._/:@]))(?i:replace[-_]?me|change[-_]?me)(?=[-._/:@]|\Z)|"
                  r"\$\([A-Za-z_][A-Za-z0-9_.-]*\)")
# A variable's name written where a Kubernetes name goes: a capitalised
# words joined by underscores (``APP_NAME``, ``loop-TASK_ID``; each part a
# word, so ``P_1`` is none), the way shells,
# Make and environments spell what they fill in (between underscores too:
# ``__HTTPBIN_HOST__``), or by hyphens (``neo4j-cluster-MY-CLUSTER``), a
# word for the reader to replace, or one capitalised word between double
# underscores (``__SERVICE__``, the marker a copy script's sed replaces).
# No Kubernetes name, label value or host can hold it, so a name, label
# value or host finding about it is about a word to fill in (an Ingress
# host SERVICE_NAME-dev.example.com too); a finding of another kind
# (a ConfigMap key ``LOG_LEVEL`` missing) stays judged.
VARIABLE = re.compile(r"(?<![A-Za-z0-9_])(?:_*([A-Z][A-Z0-9]*(?:_[A-Z][A-Z0-9]*)+|[A-Z][A-Z0-9]*(?:-[A-Z][A-Z0-9]*)+)_*"
                      r"|__+([A-Z][A-Z0-9]*)__+)(?![A-Za-z0-9_])")
_AS_NAME = "(a variable's name where a name goes)"
_AS_SETTER = "(a kpt setter's value)"
# (a name pattern starts ^[a-z0-9]; a hostname pattern, ^(\*\.)?[a-z0-9], lets a wildcard lead;
# a domain pattern opens its repeated labels first, ^(([a-z0-9]+|...)\.)+)
_NAME_FINDING = re.compile(r": '[^']*' (?:is not a valid .*?\b(?:name|prefix|label value|host)\b|"
                           r"does not match '\^(?:\(\\\\\*\\\\\.\)\?)?\(*\[a-z0-9\])")
QUOTED = re.compile(r"""['"]\$\{[^'"]*\}['"]""")
# (a key holding an envsubst pattern may lose its closing brace to YAML:
# ``${ROLE/#arn/eks.amazonaws.com/role-arn: arn}``)
QUOTED_HELD = re.compile(r"""['"]([^'"]*(\$\{[^'"{}]+\}?|\{\{[^'"]*?\}\}|\$[A-Z_][A-Z0-9_]{2,}\b)[^'"]*|<[^<>'"]+>)['"]""")


def is_placeholder(value: object, holding: bool = False) -> bool:
    """Whether ``value`` is wholly a ``${...}`` placeholder (with ``holding``:
    holds one anywhere)."""
    if not isinstance(value, str):
        return False
    return (HELD.search(value) if holding else WHOLE.match(value)) is not None


def split(findings: Sequence[Finding], locator: Locator, holding: bool = False,
          unknown: frozenset[int] = frozenset(), left: bool = False,
          words: Mapping[str, str] | None = None,
          source: Callable[[str], str | None] | None = None,
          named: Mapping[str, tuple[str, tuple[str, ...]]] | None = None,
          told: Mapping[str, str] | None = None) -> tuple[list[Finding], list[Suppressed]]:
    """(findings to report, findings about a value that is wholly a
    placeholder, or with ``holding`` holds one, or that holds a variable
    whose value the repository cannot show: ``unknown``, the id() of such
    values, as substitution left them; with ``left`` (the controller's
    substitution kept unknown variables as written), any value still
    holding a ``${...}``: the controller replaces every one, so one left
    is a variable whose value is not known here). With ``holding``,
    ``words`` (word -> the program that replaces it, ``applied.sed_words``)
    are placeholders too, as a whole value or a part of one
    (``disk-wipe-HOSTNAME``), and so is a variable's name (``APP_NAME``) in a
    value a name finding is about. With ``holding`` and ``source`` (a file's text
    by its repository path), a required field that is missing where the
    object writes it commented out with a placeholder value
    (``# namespace: <your-namespace>``), as two commented-out blocks or
    more to choose from, or with no value over a ``# TODO`` note, is left
    for the reader to fill in, and so is a value written empty beside a
    note of words (``image:  # Replace with your mapper image name``). ``named`` (word -> the page that replaces it
    and the files its command names, ``applied.page_sed_words``) are
    placeholders in those files, in any root, controller roots too. With
    ``holding``, ``told`` (word -> the page that tells the reader it stands
    for a value to fill in, ``applied.page_told_words``) are placeholders in
    a value a name finding is about (``name: UNDEFINED`` where the README
    says "Any UNDEFINED values should be patched via the overlay")."""
    kept: list[Finding] = []
    exempt: list[Suppressed] = []
    filled = _filled(words) if holding and words else None
    by_page = _filled(named) if named else None
    told_of = _filled(told) if holding and told else None
    for f in findings:
        if f.result.validator in ("build", "substitution"):
            kept.append(f)
        elif _about_placeholder(f.result, locator, holding or left, unknown) or \
                _rule_over_placeholders(f.result, locator, holding or left, unknown):
            exempt.append(Suppressed(f, "placeholder", "${...}"))
        elif holding and source is not None and (line := _commented_out(f.result, locator, source)
                                                 or _empty_beside_note(f.result, locator, source)):
            exempt.append(Suppressed(f, "placeholder", line))
        elif holding and source is not None and (_braced_word(f.result, locator, source)
                                                 or _bracketed_word(f.result, locator, source)):
            exempt.append(Suppressed(f, "placeholder", "${...}"))
        elif holding and source is not None and (word := _kpt_setter(f.result, locator, source)):
            exempt.append(Suppressed(f, "placeholder", f"{word} {_AS_SETTER}"))
        elif filled is not None and words and (word := _about_word(f.result, locator, filled)) is not None:
            exempt.append(Suppressed(f, "placeholder", f"{word} ({words[word]} replaces it)"))
        elif by_page is not None and named and (word := _about_word(f.result, locator, by_page)) is not None \
                and _named_file(f, named[word][1]):
            exempt.append(Suppressed(f, "placeholder", f"{word} ({named[word][0]} replaces it)"))
        elif holding and _NAME_FINDING.search(f.result.message) and \
                (word := _about_word(f.result, locator, VARIABLE)) is not None:
            exempt.append(Suppressed(f, "placeholder", f"{word} {_AS_NAME}"))
        elif told_of is not None and told and _NAME_FINDING.search(f.result.message) and \
                (word := _about_word(f.result, locator, told_of)) is not None:
            exempt.append(Suppressed(f, "placeholder", f"{word} ({told[word]} says to fill it in)"))
        else:
            kept.append(f)
    return kept, exempt


def _named_file(finding: Finding, paths: tuple[str, ...]) -> bool:
    from krmcheck import applied  # (only a word a page replaces asks)

    return bool(finding.location.path) and applied.named_by(finding.location.path, paths)


def _filled(words: Mapping[str, object]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9])({alternatives})(?![A-Za-z0-9])")


_MISSING = re.compile(r"missing required field '([^']+)'")
# A note that what follows is yet to be done: ``# TODO: Configure vSphere VM settings``
_TODO = re.compile(r"#\s*(?:TODO|FIXME)\b")
_EMPTY_WITH_TODO = re.compile(r"[ \t]*(?:-[ \t]+)?([^\s#:][^#:]*?):[ \t]*\{\}[ \t]+(#[ \t]*(?:TODO|FIXME)\b.*?)[ \t]*\Z")


# kpt's setter comments, which ``kpt cfg set`` and the apply-setters function
# find the values to set by: ``# kpt-set: ${name}-pool`` (kpt 1.0),
# ``# {"$kpt-set":"name"}`` and the ``# {"$openapi":"name"}`` before it
_KPT_SETTER = re.compile(r"#\s*(?:kpt-set:|\{\s*\"\$(?:kpt-set|openapi)\"\s*:)")
# a word in capitals, or capitalised words joined by - or _ (NAME, KF-PROJECT)
_CAPITALS = re.compile(r"(?<![A-Za-z0-9])[A-Z][A-Z0-9]+(?:[-_][A-Z][A-Z0-9]*)*(?![a-z0-9])")


def _kpt_setter(result: Result, locator: Locator, source: Callable[[str], str | None]) -> str | None:
    """The word in capitals of the value a finding is about that is written,
    on a line the value came from (its own, or a ``namePrefix: NAME-``),
    before a kpt setter's comment (``name: NAME # {"$kpt-set":"name"}``):
    the package's stand-in, which ``kpt cfg set`` or apply-setters
    replaces with the user's value; None where there is none."""
    node = _value(result, locator)
    if node is None or not isinstance(node.value, str):
        return None
    words = _CAPITALS.findall(node.value)
    if not words:
        return None
    for origin in (node.origin, *node.trail):
        text = source(origin.path) if origin.path and origin.line > 0 else None
        lines = text.splitlines() if text is not None else []
        if origin.line > len(lines):
            continue
        line = lines[origin.line - 1]
        comment = _KPT_SETTER.search(line)
        if comment is None:
            continue
        written = line[:comment.start()]
        for word in words:
            if re.search(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])", written):
                return word
    return None


_BRACED = re.compile(r"\{[ \t]*([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*\}")


def _braced_word(result: Result, locator: Locator, source: Callable[[str], str | None]) -> bool:
    """Whether the value a finding is about is written ``{word}``: a format
    string's fill-in written bare (``storageClassName: {storageClassName}``),
    which YAML reads as a map of one key with no value."""
    node = _node(result, locator) if result.field_path else None
    if not isinstance(node, Map) or len(node.items) != 1 or node.origin.line < 1:
        return False
    [(key, value)] = node.items.items()
    if not isinstance(value, Scalar) or value.value is not None:
        return False
    text = source(value.origin.path)
    lines = text.splitlines() if text is not None else []
    if not 0 < value.origin.line <= len(lines):
        return False
    # the key is written between braces on its line, the map's only text
    at = value.origin.col - 1
    written = next((m for m in _BRACED.finditer(lines[value.origin.line - 1]) if m.start() < at < m.end()), None)
    return written is not None and written.group(1) == key


# a fill-in in capitals (GOOGLE_APPLICATION_CREDENTIALS, AKS CONTEXT) or of
# words joined by - or _ (your-github-token-with-repo-access), as between <>
_BRACKETED = re.compile(r"[A-Z][A-Z0-9]*(?:[ _-][A-Z][A-Z0-9]*)*|[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)+")


def _bracketed_word(result: Result, locator: Locator, source: Callable[[str], str | None]) -> bool:
    """Whether the value a finding is about is written ``[WORDS]``: a fill-in
    in capitals or of joined words between brackets for the reader to
    replace (``credentials.json: [GOOGLE_APPLICATION_CREDENTIALS]``,
    ``password: [your-github-token]``), which YAML reads as a list of one
    item."""
    node = _node(result, locator) if result.field_path else None
    if not isinstance(node, Seq) or len(node.items) != 1:
        return False
    [item] = node.items
    if not isinstance(item, Scalar) or not isinstance(item.value, str) or not _BRACKETED.fullmatch(item.value):
        return False
    text = source(item.origin.path) if item.origin.line > 0 else None
    lines = text.splitlines() if text is not None else []
    if not 0 < item.origin.line <= len(lines):
        return False
    # the word is written between brackets on its line, as the list's only text
    return re.search(r"\[[ \t]*" + re.escape(item.value) + r"[ \t]*\]", lines[item.origin.line - 1]) is not None


def _commented_out(result: Result, locator: Locator, source: Callable[[str], str | None]) -> str:
    """The comment that writes the missing field with a placeholder value
    (``# namespace: <your-namespace>``) inside the object's mapping, the
    first of two or more commented-out blocks of it (``# hive:`` over
    ``#   type: s3``, then again over ``#   type: azure``), or the TODO note
    under the field written with no value (``spec:`` over ``# TODO:
    Configure vSphere VM settings``) or beside the mapping written empty on
    its key's line (``spec: {} # TODO: Must be filled by user``), or the
    note beside the field written with no value (``domain: ## Domain``,
    ``host: # Provide the host name``), if any:
    the author left the field for the reader to fill in or to choose; ""
    where there is none."""
    missing = _MISSING.search(result.message)
    if missing is None:
        return ""
    node = _node(result, locator)
    if not isinstance(node, Map) or node.origin.line < 1:
        return ""
    text = source(node.origin.path)
    if text is None:
        return ""
    lines = text.splitlines()
    own = _EMPTY_WITH_TODO.match(lines[node.origin.line - 1]) if node.origin.line <= len(lines) else None
    if own is not None and not node.items:
        # the mapping written empty on its key's line with a TODO note (``spec: {} # TODO: Must be filled by user``)
        return f"{own.group(2)} (beside {own.group(1)}: {{}})"
    indent = max(node.origin.col - 1, 0)  # the column of the mapping's keys
    field = re.escape(missing.group(1))
    comment = re.compile(rf"#\s*{field}\s*:\s*(.*?)\s*\Z")
    empty = re.compile(rf"{field}\s*:\s*(?:#.*)?\Z")  # written with no value (null)
    # ... with a note of words beside it (``# # terraform output tenant``: the marks may be spaced)
    beside = re.compile(rf"{field}\s*:\s+(#+(?:\s*#+)*\s*\S*[A-Za-z].*?)\s*\Z")
    blocks: list[str] = []  # the field commented out as a block (`# hive:` over commented lines)
    held = -1  # the depth of the field written with no value, while below it
    keys = -1
    # the lines after the mapping's first key, to where it ends
    for line in lines[node.origin.line:]:
        stripped = line.lstrip(" ")
        depth = len(line) - len(stripped)
        if stripped and not stripped.startswith("#") and depth < indent:
            break
        if stripped and not stripped.startswith("#"):
            held = depth if empty.match(stripped) else -1
            keys = depth if keys < 0 else keys  # the column of the mapping's own keys
            note = beside.match(stripped) if held >= 0 and depth == keys else None
            if note is not None:
                return f"{note.group(1)} (beside {missing.group(1)}:, written with no value)"  # ``domain: ## Domain``
        elif held >= 0 and depth > held and _TODO.match(stripped):
            return f"{stripped} (under {missing.group(1)}:)"  # left to do, and the author says so
        found = comment.match(stripped) if depth >= indent else None
        if found and found.group(1) and is_placeholder(found.group(1).strip("'\""), holding=True):
            return stripped
        if found and not found.group(1):
            blocks.append(stripped)
    # written out as a choice, two blocks or more: the reader uncomments one
    return f"{blocks[0]} ({len(blocks)} choices)" if len(blocks) >= 2 else ""


# a key written with no value and a note of words beside it (``image:  #
# Replace with your mapper image name``; the marks may be spaced, ``# #``):
# marks, a space, then two words or more (``#{ARGO_CONTROLLER}``, a token a
# program may replace, is no note)
_EMPTY_BESIDE_NOTE = re.compile(r"[ \t]*(?:-[ \t]+)?[^\s#:'\"][^#:]*?:[ \t]+"
                                r"(#+(?:[ \t]*#+)*[ \t]+[A-Za-z][\w'-]*[ \t]+\S.*?)[ \t]*\Z")


def _empty_beside_note(result: Result, locator: Locator, source: Callable[[str], str | None]) -> str:
    """The note beside the value a finding is about, where that value is
    written empty (null) with a note of words on its line (``image:  #
    Replace with your mapper image name``): a form the reader fills in;
    "" where there is none."""
    node = _value(result, locator)
    if node is None or node.value is not None or node.origin.line < 1:
        return ""
    text = source(node.origin.path)
    lines = text.splitlines() if text is not None else []
    if node.origin.line > len(lines):
        return ""
    note = _EMPTY_BESIDE_NOTE.match(lines[node.origin.line - 1])
    return f"{note.group(1)} (beside a value written empty)" if note else ""


def _about_word(result: Result, locator: Locator, filled: re.Pattern[str]) -> str | None:
    """The replaced word the value a finding is about holds, if any."""
    node = _value(result, locator)
    if node is None or not isinstance(node.value, str):
        return None
    found = filled.search(node.value)
    return next(g for g in found.groups() if g) if found else None


def _about_placeholder(result: Result, locator: Locator, holding: bool, unknown: frozenset[int]) -> bool:
    if (QUOTED_HELD if holding else QUOTED).search(result.message):
        return True
    node = _value(result, locator)
    return node is not None and (is_placeholder(node.value, holding) or id(node) in unknown)


def _rule_over_placeholders(result: Result, locator: Locator, holding: bool, unknown: frozenset[int]) -> bool:
    """A CEL rule judged over an object some value of which is still a
    placeholder (``group: ${GROUP:-gateway.networking.k8s.io}`` under the
    ``spec`` a rule reads): which values the rule reads is not known, so its
    verdict on the written text says nothing of what will be applied."""
    tags = dict(result.tags)
    if tags.get("rule") != "cel":
        return False
    node = _node(result, locator)
    if node is None or isinstance(node, Scalar):
        return False
    read = read_paths(tags.get("cel-rule", ""))
    return any(isinstance(n, Scalar) and (is_placeholder(n.value, holding) or id(n) in unknown)
               and any(where[:len(path)] == path for path in read)
               for where, n in _scalars(node, ()))


def _scalars(node: Node, where: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Node]]:
    """Each scalar under ``node`` with its path from it (a list's items are ``*``)."""
    if isinstance(node, Map):
        for key, child in node.items.items():
            yield from _scalars(child, (*where, key))
    elif isinstance(node, Seq):
        for child in node.items:
            yield from _scalars(child, (*where, "*"))
    else:
        yield where, node


_MACRO = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\.(?:all|exists|exists_one|map|filter)\(\s*([A-Za-z_]\w*)\s*,")
_CHAIN = re.compile(r"(?<![\w.'\"])([A-Za-z_]\w*)((?:\.[A-Za-z_]\w*)+)(\s*\()?")


def read_paths(rule: str) -> list[tuple[str, ...]]:
    """The field paths a CEL rule reads, relative to the node it is written
    on (``self.network.type`` -> ``network.type``; ``self.refs.all(r,
    r.group == ...)`` -> ``refs.*.group``), the longest ones only (``has(self.a)``
    beside ``self.a.b`` reads ``a.b``); the whole node (``()``) when it
    names no field of it."""
    bound: dict[str, str] = {m.group(2): m.group(1) for m in _MACRO.finditer(rule)}

    def resolve(head: str, parts: list[str], depth: int = 0) -> tuple[str, ...] | None:
        if head in ("self", "oldSelf"):
            return tuple(parts)
        if head in bound and depth < 8:
            base, *rest = bound[head].split(".")
            inner = resolve(base, rest, depth + 1)
            return None if inner is None else (*inner, "*", *parts)
        return None

    found: set[tuple[str, ...]] = set()
    for m in _CHAIN.finditer(rule):
        parts = m.group(2).split(".")[1:]
        if m.group(3):
            parts = parts[:-1]  # a method: self.name.matches(...) reads name
        path = resolve(m.group(1), parts)
        if path is not None:
            found.add(path)
    longest = [p for p in found if not any(q != p and q[:len(p)] == p for q in found)]
    return longest or [()]


def _node(result: Result, locator: Locator) -> Node | None:
    """The node the finding is about (its field's), if it is there."""
    resource = locator.find(result)
    if resource is None:
        return None
    from krmcheck.tree import fieldpath

    try:
        steps = fieldpath.parse(result.field_path) if result.field_path else []
    except ValueError:
        return None
    chain = fieldpath.trace(resource.node, steps)
    return chain[-1] if len(chain) == len(steps) + 1 else None


def _value(result: Result, locator: Locator) -> Scalar | None:
    """The scalar the finding is about, if it is about one."""
    node = _node(result, locator) if result.field_path else None  # (no field: not about a value)
    return node if isinstance(node, Scalar) else None


def summarise(reports: Sequence[RootReport]) -> tuple[RootReport, ...]:
    """One info finding for the run, on the first root with exempt findings,
    per kind of placeholder (``${...}``; a word a program replaces; a
    variable's name where a name goes; a kpt setter's stand-in; a field
    written commented out)."""
    out = list(reports)

    def kind(where: str) -> str:
        return "${...}" if where == "${...}" else "comment" if where.startswith("#") else \
            "variable" if where.endswith(_AS_NAME) else "setter" if where.endswith(_AS_SETTER) else "word"

    for wanted in ("${...}", "word", "variable", "setter", "comment"):
        exempt = [s for r in reports for s in r.suppressed if s.by == "placeholder" and kind(s.where) == wanted]
        if not exempt:
            continue
        plural = "finding" if len(exempt) == 1 else "findings"
        if wanted == "comment":
            message = (f"{len(exempt)} {plural} about a required field that the object writes commented out "
                       f"with a placeholder value, as choices to uncomment, or with no value under a TODO note or beside a note, "
                       f"for the reader to fill in, "
                       f"were not judged ({exempt[0].where})")
        elif wanted == "variable":
            named = sorted({s.where.split(" ", 1)[0] for s in exempt})
            shown = ", ".join(named[:3]) + (f" and {len(named) - 3} more" if len(named) > 3 else "")
            message = (f"{len(exempt)} {plural} about names written as a variable's name in capitals "
                       f"({shown}), a word to fill in, were not judged")
        elif wanted == "setter":
            named = sorted({s.where.split(" ", 1)[0] for s in exempt})
            shown = ", ".join(named[:3]) + (f" and {len(named) - 3} more" if len(named) > 3 else "")
            message = (f"{len(exempt)} {plural} about values a kpt setter's comment marks, written as the "
                       f"package's stand-in in capitals ({shown}) that kpt cfg set or apply-setters replaces, "
                       f"were not judged")
        elif wanted == "word":
            named = sorted({s.where for s in exempt})
            shown = "; ".join(named[:3]) + (f"; and {len(named) - 3} more" if len(named) > 3 else "")
            message = (f"{len(exempt)} {plural} about values holding a word that a program or page of the "
                       f"repository replaces before applying were not judged: {shown}")
        else:
            message = (f"{len(exempt)} {plural} about values holding a placeholder (${{...}}, "
                       f"<what to write>, {{name}}, REPLACE-ME) that nothing filled in were not judged")
        ids = {id(s) for s in exempt}
        i, first = next((i, s) for i, r in enumerate(out) for s in r.suppressed if id(s) in ids)
        info = Finding(Result(message=message, severity="info", tags=(("validator", VALIDATOR),)),
                       out[i].root, first.finding.location)
        out[i] = dataclasses.replace(out[i], findings=out[i].findings + (info,))
    return tuple(out)
