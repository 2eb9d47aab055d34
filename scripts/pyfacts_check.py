#!/usr/bin/env python3
"""Check an MSP schema against the wire facts of the generated `muse-code-msp` package.

usage: python3 scripts/pyfacts_check.py SITE_DIR SCHEMA [--experimental] [--allow FILE]

SITE_DIR holds the unpacked wheel (`SITE_DIR/muse_code_msp/...`). The package is another
renderer's output of a real schema version: a TypedDict per object definition (`_XBase`
parents carry the required keys), open enums as `str` plus `X_KNOWN_VALUES`, closed enums as
`Literal`, tagged unions as `_Arm | _Arm` of private TypedDicts, and the `METHODS`,
`NOTIFICATIONS`, `ERRORS`, `GRANTABLE_CAPABILITIES` tables.

Checked, per surface:
  * every public TypedDict is a definition with the same members, the same required set, the
    same nullability and a compatible JSON type per member; a union alias is a `oneOf` whose
    arms match the package's arms one by one (by their `const` tag), and whose openness is
    `open` exactly when the package adds a catch-all arm (a plain-`str` tag over the arms'
    common members: the package's rendering of an open union, as `str` is of an open enum);
  * every enum has the same values in the same openness;
  * every untagged alias (`RequestId`, ...) has a compatible type;
  * methods and notifications name the same params/result definitions; every error has the
    same code, kind, retryable and overrideKinds; `requests` name package definitions;
  * what the schema has beyond the surface: with --experimental, anything the experimental
    package does not have is a difference. Without it (the stable surface, checked against a
    schema that may also carry the experimental one), every stable item must be present and
    not marked `x-msp-stability: experimental`; every other definition, method, notification
    and error must come from the experimental package and be marked experimental; members and
    enum values beyond the stable ones must come from the experimental package (the schema
    cannot mark those).

Prints one line per difference, then `pyfacts-check: N differences over T facts`. With
--allow FILE (one difference per line as printed, a tab, its reason; `#` comments), the
differences it explains are marked `allowed:`, an entry that explains nothing is reported
stale, and the last line adds `, U unexplained`.
Exit status 0 when no difference is unexplained and no entry is stale, 1 otherwise, 2 on bad
usage.
"""
import json
import sys
import types
import typing

SPEC_CLASSES = {"MethodSpec", "NotificationSpec", "ErrorSpec"}
PRIMITIVE = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}
EXPERIMENTAL = "experimental"


def enum_constant(name):
    """`McpOAuthLoginOutcome` -> `MCP_O_AUTH_LOGIN_OUTCOME_KNOWN_VALUES` (the package's spelling)."""
    out = []
    for i, c in enumerate(name):
        boundary = i > 0 and c.isupper() and (
            not name[i - 1].isupper() or (i + 1 < len(name) and name[i + 1].islower()))
        out.append(("_" if boundary else "") + c.upper())
    return "".join(out) + "_KNOWN_VALUES"


class Surface:
    """The public surface of one package module, classified."""

    def __init__(self, module):
        self.module = module
        self.objects = {}  # name -> TypedDict class
        self.enums = {}  # name -> (open?, values)
        self.tagged = {}  # name -> tuple of arm classes
        self.untagged = {}  # name -> the alias object
        for name in dir(module):
            if name.startswith("_") or not name[:1].isupper():
                continue
            obj = getattr(module, name)
            if isinstance(obj, type) and typing.is_typeddict(obj):
                if name not in SPEC_CLASSES:
                    self.objects[name] = obj
            elif obj is str and hasattr(module, enum_constant(name)):
                self.enums[name] = (True, list(getattr(module, enum_constant(name))))
            elif typing.get_origin(obj) is typing.Literal:
                self.enums[name] = (False, list(typing.get_args(obj)))
            elif isinstance(obj, types.UnionType) or typing.get_origin(obj) is typing.Union:
                arms = typing.get_args(obj)
                if all(isinstance(a, type) and typing.is_typeddict(a) for a in arms):
                    self.tagged[name] = arms
                else:
                    self.untagged[name] = obj
        # Resolved hints lose alias names: an open enum is plain `str` at run time. Resolve hints
        # with a stand-in class per open enum instead, and map Literal aliases back by identity.
        self.open_refs = {n: type(n, (), {"msp_open_enum": n}) for n, (o, _) in self.enums.items() if o}
        self.literal_names = {id(getattr(module, n)): n for n, (o, _) in self.enums.items() if not o}
        self.union_names = {frozenset(a.__name__ for a in arms): n for n, arms in self.tagged.items()}
        self.methods = dict(getattr(module, "METHODS", {}))
        self.notifications = dict(getattr(module, "NOTIFICATIONS", {}))
        self.errors = {e["code"]: e for e in getattr(module, "ERRORS", ())}
        self.grantable = list(getattr(module, "GRANTABLE_CAPABILITIES", ()))

    def names(self):
        return set(self.objects) | set(self.enums) | set(self.tagged) | set(self.untagged)

    def hints(self, cls):
        """`cls`'s member hints, open enums resolved to their stand-ins."""
        return typing.get_type_hints(cls, localns=self.open_refs)

    # -- a resolved Python hint as a set of JSON shapes
    def shapes(self, hint):
        if isinstance(hint, type) and hasattr(hint, "msp_open_enum"):
            return {("enum", hint.msp_open_enum)}
        if typing.get_origin(hint) is typing.Literal:
            name = self.literal_names.get(id(hint))
            return {("enum", name)} if name else {("string", tuple(sorted(typing.get_args(hint))))}
        if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
            args = typing.get_args(hint)
            arms = [a for a in args if a is not type(None)]
            union = self.union_names.get(frozenset(getattr(a, "__name__", "") for a in arms))
            if union:
                return {("tagged", union)} | ({("null",)} if len(arms) < len(args) else set())
            out = set()
            for a in args:
                out |= self.shapes(a)
            return out
        if hint is typing.Any:
            return {("any",)}
        if hint in PRIMITIVE:
            return {(PRIMITIVE[hint],)}
        if isinstance(hint, type) and typing.is_typeddict(hint):
            return {("object", hint.__name__)}
        origin, args = typing.get_origin(hint), typing.get_args(hint)
        if origin is list:
            return {("array", frozenset(self.shapes(args[0])))}
        if origin is dict:
            if args[1] is typing.Any:
                return {("any",)}
            return {("map", frozenset(self.shapes(args[1])))}
        return {("unknown", repr(hint))}


class SchemaView:
    """The schema side: JSON shapes of property schemas, with `$ref` resolved by kind."""

    def __init__(self, doc):
        self.doc = doc
        self.defs = doc.get("$defs", {})

    def target(self, node):
        return node["$ref"].split("/")[-1]

    def shapes(self, node):
        if "$ref" in node:
            name = self.target(node)
            d = self.defs.get(name)
            if d is None:
                return {("dangling", name)}
            if "enum" in d:
                return {("enum", name)}
            if "oneOf" in d:
                return {("tagged", name)}
            if "properties" in d or d.get("type") == "object":
                return {("object", name)}
            return self.shapes(d)  # an untagged alias: compare its content
        if "anyOf" in node:
            out = set()
            for arm in node["anyOf"]:
                out |= self.shapes(arm)
            return out
        if "const" in node:
            return {("string", (node["const"],))}
        if "enum" in node:
            return {("string", tuple(sorted(node["enum"])))}
        kinds = node.get("type")
        kinds = kinds if isinstance(kinds, list) else [kinds]
        out = set()
        for kind in kinds:
            if kind == "array":
                out.add(("array", frozenset(self.shapes(node.get("items", {})))))
            elif kind == "object":
                extra = node.get("additionalProperties")
                if isinstance(extra, dict):
                    out.add(("map", frozenset(self.shapes(extra))))
                else:
                    out.add(("any",))  # a free-form object
            elif kind is None:
                out.add(("any",))
            else:
                out.add((kind,))
        return out


def nullable(shapes):
    return ("null",) in shapes


def show(shapes):
    def one(s):
        if s[0] in ("array", "map"):
            return f"{s[0]}<{show(s[1])}>"
        return ":".join(str(x) for x in s)
    return "|".join(sorted(one(s) for s in shapes))


class Checker:
    def __init__(self, pkg, full, schema, experimental):
        self.pkg = pkg  # the surface under check
        self.full = full  # the experimental surface (a superset of the stable one)
        self.schema = schema
        self.experimental = experimental
        self.out = []
        self.facts = 0

    def fact(self):
        self.facts += 1

    def diff(self, line):
        self.out.append(line)

    # -- objects
    def check_members(self, where, cls, node, wider=None):
        """`cls`'s members against the object schema `node`; `wider` may explain extra members."""
        props = node.get("properties", {})
        required = set(node.get("required", []))
        hints = self.pkg.hints(cls)
        for field, hint in hints.items():
            self.fact()
            if field not in props:
                self.diff(f"{where}.{field}: missing in schema")
                continue
            want_req = field in cls.__required_keys__
            if want_req != (field in required):
                self.diff(f"{where}.{field}: required is {want_req} in package, {field in required} in schema")
            want = self.pkg.shapes(hint)
            got = self.view.shapes(props[field])
            if nullable(want) != nullable(got):
                self.diff(f"{where}.{field}: nullable is {nullable(want)} in package, {nullable(got)} in schema")
            want.discard(("null",))
            got.discard(("null",))
            if want != got:
                self.diff(f"{where}.{field}: type {show(want)} in package, {show(got)} in schema")
        for field in props:
            if field in hints:
                continue
            self.fact()
            if wider is not None and field in self.full.hints(wider):
                continue  # an experimental member of a stable definition: the schema cannot mark it
            self.diff(f"{where}.{field}: in schema, not in package")
        for field in required - set(props):
            self.diff(f"{where}: required names {field}, which is no member")

    def check_defs(self):
        defs = self.schema.get("$defs", {})
        view = self.view
        for name, cls in sorted(self.pkg.objects.items()):
            self.fact()
            d = defs.get(name)
            if d is None:
                self.diff(f"def {name}: missing in schema")
                continue
            if d.get("type") != "object":
                self.diff(f"def {name}: an object in package, {json.dumps(d.get('type'))} in schema")
            wider = self.full.objects.get(name) if not self.experimental else None
            self.check_members(f"def {name}", cls, d, wider)
        for name, (is_open, values) in sorted(self.pkg.enums.items()):
            self.fact()
            d = defs.get(name)
            if d is None or "enum" not in d:
                self.diff(f"enum {name}: missing in schema" if d is None else f"enum {name}: not an enum in schema")
                continue
            want = "open" if is_open else "closed"
            if d.get("x-msp-openness") != want:
                self.diff(f"enum {name}: {want} in package, {d.get('x-msp-openness')} in schema")
            if d.get("type") != "string":
                self.diff(f"enum {name}: type {json.dumps(d.get('type'))} in schema, string in package")
            extra = [v for v in d["enum"] if v not in values]
            if not self.experimental and name in self.full.enums:
                extra = [v for v in extra if v not in self.full.enums[name][1]]
            missing = [v for v in values if v not in d["enum"]]
            if missing:
                self.diff(f"enum {name}: values {missing} missing in schema")
            if extra:
                self.diff(f"enum {name}: values {extra} in schema, not in package")
        for name, arms in sorted(self.pkg.tagged.items()):
            self.fact()
            d = defs.get(name)
            if d is None or "oneOf" not in d:
                self.diff(f"union {name}: missing in schema" if d is None else f"union {name}: not a oneOf in schema")
                continue
            by_tag = {}
            for arm in d["oneOf"]:
                tags = [(f, p["const"]) for f, p in arm.get("properties", {}).items() if "const" in p]
                by_tag[tags[0] if tags else None] = arm
            catch_all = []
            tagged = []
            for arm in arms:
                tag = next(((f, typing.get_args(h)[0]) for f, h in self.pkg.hints(arm).items()
                            if typing.get_origin(h) is typing.Literal), None)
                if tag is None:
                    catch_all.append(arm)
                    continue
                tagged.append((arm, tag))
                label = f"union {name}[{tag[1]}]"
                node = by_tag.pop(tag, None)
                self.fact()
                if node is None:
                    self.diff(f"{label}: arm missing in schema")
                    continue
                wider = None
                if not self.experimental and name in self.full.tagged:
                    wider = next((a for a in self.full.tagged[name] if a.__name__ == arm.__name__), None)
                self.check_members(label, arm, node, wider)
            for tag in by_tag:
                self.diff(f"union {name}: arm {tag} in schema, not in package")
            # The package renders an open union with a catch-all arm (its tag a plain `str`, its
            # members the tagged arms' common ones, widened), as it renders an open enum as `str`.
            # In the schema that is the `open` marker, not an arm.
            for arm in catch_all:
                self.fact()
                hints = self.pkg.hints(arm)
                tag_fields = {tag[0] for _, tag in tagged}
                common = set.intersection(*(set(self.pkg.hints(a)) for a, _ in tagged)) if tagged else set()
                if not tagged or len(tag_fields) != 1 or hints.get(next(iter(tag_fields))) is not str:
                    self.diff(f"union {name}: catch-all arm {arm.__name__} has no plain-string tag")
                elif set(hints) != common:
                    self.diff(f"union {name}: catch-all arm {arm.__name__} members {sorted(hints)} "
                              f"are not the tagged arms' common members {sorted(common)}")
            want = "open" if catch_all else "closed"
            if d.get("x-msp-openness") != want:
                self.diff(f"union {name}: {want} in package (catch-all arm: {bool(catch_all)}), "
                          f"{d.get('x-msp-openness')} in schema")
        for name, alias in sorted(self.pkg.untagged.items()):
            self.fact()
            d = defs.get(name)
            if d is None:
                self.diff(f"alias {name}: missing in schema")
                continue
            want, got = self.pkg.shapes(alias), view.shapes(d)
            if want != got:
                self.diff(f"alias {name}: type {show(want)} in package, {show(got)} in schema")
        # what the schema has beyond this surface
        for name, d in sorted(defs.items()):
            self.check_presence(f"def {name}", name in self.pkg.names(), name in self.full.names(), d)

    def check_presence(self, label, in_surface, in_full, node):
        marked = node.get("x-msp-stability") == EXPERIMENTAL
        if self.experimental:
            if not in_surface:
                self.fact()
                self.diff(f"{label}: in schema, not in package")
            return
        self.fact()
        if in_surface and marked:
            self.diff(f"{label}: stable in package, marked experimental in schema")
        elif not in_surface and not in_full:
            self.diff(f"{label}: in schema, in neither package surface")
        elif not in_surface and not marked:
            self.diff(f"{label}: experimental-only in package, not marked experimental in schema")

    # -- tables
    def check_tables(self):
        defs = self.schema.get("$defs", {})
        for table, key, parts in (("METHODS", "methods", ("params", "result")),
                                  ("NOTIFICATIONS", "notifications", ("params",))):
            ours = self.schema.get(key, {})
            pkg_table = getattr(self.pkg, key)
            for method, spec in sorted(pkg_table.items()):
                self.fact()
                entry = ours.get(method)
                if entry is None:
                    self.diff(f"{key} {method}: missing in schema")
                    continue
                for part in parts:
                    want = spec.get(part)
                    got = self.view.target(entry[part]) if part in entry else None
                    if want != got:
                        self.diff(f"{key} {method}.{part}: {want} in package, {got} in schema")
                extra = set(entry) - set(parts) - {"description", "x-msp-stability", "x-msp-descriptor"}
                if extra:
                    self.diff(f"{key} {method}: unexpected members {sorted(extra)}")
            full_table = getattr(self.full, key)
            for method, entry in sorted(ours.items()):
                self.check_presence(f"{key} {method}", method in pkg_table, method in full_table, entry)
        for method, entry in sorted(self.schema.get("requests", {}).items()):
            self.fact()
            if method in self.full.methods or method in self.full.notifications:
                self.diff(f"requests {method}: the package lists it as a client method or notification")
            for part in ("params", "result"):
                target = self.view.target(entry[part]) if part in entry else None
                if target is None or target not in self.pkg.names():
                    self.diff(f"requests {method}.{part}: {target} is not a package definition")
                elif target not in defs:
                    self.diff(f"requests {method}.{part}: {target} dangles")

    def check_errors(self):
        ours = {}
        for e in self.schema.get("errors", []):
            if e.get("code") in ours:
                self.diff(f"error {e.get('code')}: listed twice")
            ours[e.get("code")] = e
        for code, spec in sorted(self.pkg.errors.items()):
            self.fact()
            e = ours.get(code)
            if e is None:
                self.diff(f"error {code} {spec['kind']}: missing in schema")
                continue
            if e.get("kind") != spec["kind"]:
                self.diff(f"error {code}: kind {spec['kind']} in package, {e.get('kind')} in schema")
            if e.get("retryable") != spec["retryable"]:
                self.diff(f"error {code}: retryable {spec['retryable']} in package, {e.get('retryable')} in schema")
            if list(e.get("overrideKinds", [])) != list(spec["overrideKinds"]):
                self.diff(f"error {code}: overrideKinds {list(spec['overrideKinds'])} in package, "
                          f"{e.get('overrideKinds', [])} in schema")
        for code, e in sorted(ours.items(), key=lambda kv: str(kv[0])):
            self.check_presence(f"error {code}", code in self.pkg.errors, code in self.full.errors, e)

    def check_capabilities(self):
        grantable = self.schema.get("capabilities", {}).get("grantable", [])
        self.fact()
        missing = [c for c in self.pkg.grantable if c not in grantable]
        extra = [c for c in grantable if c not in self.pkg.grantable
                 and (self.experimental or c not in self.full.grantable)]
        if missing:
            self.diff(f"capabilities.grantable: {missing} missing in schema")
        if extra:
            self.diff(f"capabilities.grantable: {extra} in schema, not in package")
        reserved = [r.get("name") for r in self.schema.get("capabilities", {}).get("reserved", [])]
        clash = [c for c in reserved if c in self.pkg.grantable]
        if clash:
            self.diff(f"capabilities.reserved: {clash} are grantable in package")

    def run(self):
        self.view = SchemaView(self.schema)
        self.check_defs()
        self.check_tables()
        self.check_errors()
        self.check_capabilities()
        return self.out


def read_allow(path):
    """The allow-list: difference line -> reason."""
    allowed = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            difference, _, reason = line.partition("\t")
            if not reason.strip():
                raise SystemExit(f"{path}:{number}: an entry without a reason: {line}")
            allowed[difference] = reason
    return allowed


def main(argv):
    allow = None
    if "--allow" in argv:
        at = argv.index("--allow")
        if at + 1 >= len(argv):
            print(__doc__.strip().splitlines()[2], file=sys.stderr)
            return 2
        allow = argv[at + 1]
        argv = argv[:at] + argv[at + 2:]
    flags = [a for a in argv if a.startswith("--")]
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 2 or set(flags) - {"--experimental"}:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    site, schema_path = args
    sys.path.insert(0, site)
    import muse_code_msp  # noqa: E402
    import muse_code_msp.experimental  # noqa: E402

    experimental = "--experimental" in flags
    full = Surface(muse_code_msp.experimental)
    pkg = full if experimental else Surface(muse_code_msp)
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    checker = Checker(pkg, full, schema, experimental)
    out = checker.run()
    allowed = read_allow(allow) if allow else {}
    unexplained = [line for line in out if line not in allowed]
    stale = [line for line in allowed if line not in out]
    for line in out:
        print(f"allowed: {line}" if line in allowed else line)
    for line in stale:
        print(f"stale allow-list entry (no such difference): {line}")
    summary = f"pyfacts-check: {len(out)} differences over {checker.facts} facts"
    if allow:
        summary += f", {len(unexplained)} unexplained"
    print(summary)
    return 0 if not unexplained and not stale else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
