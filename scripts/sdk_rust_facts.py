#!/usr/bin/env python3
"""Check an MSP schema against the wire facts of the Rust SDK crate `muse-code-sdk`.

usage: python3 scripts/sdk_rust_facts.py CRATE_DIR SCHEMA [--allow FILE] [--notes] [--quiet]

CRATE_DIR is an unpacked `muse-code-sdk` crate. Its `src/msp/` holds the serde types the
protocol owners generate for one release; they are read as text (nothing is built). The facts
taken from them, and what they are held against in the schema:

  * definitions: every public serde type is a `$defs` entry, and a doc comment that calls it
    experimental (or, explicitly, stable) matches `x-msp-stability`;
  * members, by wire name (`rename`, `rename_all`, `flatten`): present on both sides; required
    (a plain type, no `default`, no `skip_serializing_if`) or optional; nullable when the Rust
    says so (`Option<Option<T>>`, or an `Option<T>` that is always written) or not (a plain
    type, a non-null deserializer), otherwise as far as the docs say (`omitted and explicit
    `null` both mean ...` / `explicit `null` is invalid`); the JSON type (primitive, array,
    map or the named definition); stability as for definitions;
  * enums: the wire words (`as_str` / `Deserialize` match tables, `rename`, `rename_all`, the
    string constants of a transparent newtype) and openness: a fallback that keeps the unknown
    word is open, one that turns it into a known variant or into absence is "lossy", none is
    closed; tagged unions by their tag values;
  * methods: a params or result type whose doc opens with method names is bound to them, as
    is the result type of each `command::<_, T>("method")` call of the SDK; every method name
    the docs use must be in a schema table;
  * errors: code, kind, override kinds, `retryable` (absent where the registry has none) and
    stability, from the error registry's `definition()` rows; capability names against
    `capabilities.grantable`;
  * release: the crate version and its `GENERATED_FINGERPRINT` against `x-msp-version`,
    `x-msp-served-schema` and `x-msp-host-releases`.

Doc comments rarely speak of stability, so silence is no claim: a schema item marked
experimental that the crate documents without a word is a note, not a difference. Experimental
definitions and members the crate does not have are notes too (the crate renders the stable
surface plus some experimental members).

Prints one line per difference, `<JSON pointer>\\t<message>`: the pointer names the schema
node the fact is about, or where it would be. An allow-list has one explained difference per
line, `<JSON pointer>\\t<reason>` (`#` comments and blank lines ignored); an entry explains
every difference at its pointer. Ends with `N differences` and `N unexplained differences`.
Exit status 0 when none is unexplained, 1 otherwise, 2 on bad usage.
"""
import glob
import json
import os
import re
import sys

# =============================================================================================
# Lexing: just enough Rust to find items, attributes, doc comments and literals.
# =============================================================================================

PUNCTS = ("..=", "...", "::", "=>", "->", "==", "!=", "<=", ">=", "&&", "||", "+=", "-=", "..")
OPEN = {"(": ")", "[": "]", "{": "}"}
CLOSE = {")", "]", "}"}
ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}


class Tok:
    __slots__ = ("kind", "text", "line")

    def __init__(self, kind, text, line):
        self.kind = kind  # ident | str | num | punct | doc | attr | lifetime
        self.text = text
        self.line = line

    def __repr__(self):
        return f"{self.kind}:{self.text!r}"


def _string_end(src, i):
    """Index just past the string literal whose opening quote is at src[i]."""
    i += 1
    while i < len(src):
        if src[i] == "\\":
            i += 2
            continue
        if src[i] == '"':
            return i + 1
        i += 1
    return len(src)


def _unescape(body):
    out, i = [], 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            out.append(ESCAPES.get(body[i + 1], body[i + 1]))
            i += 2
        else:
            out.append(body[i])
            i += 1
    return "".join(out)


def lex(src):
    toks, i, n, line = [], 0, len(src), 1
    while i < n:
        c = src[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif src.startswith("///", i) and not src.startswith("////", i):
            end = src.find("\n", i)
            end = n if end < 0 else end
            text = src[i + 3:end]
            toks.append(Tok("doc", text[1:] if text.startswith(" ") else text, line))
            i = end
        elif src.startswith("//", i):  # plain and inner (`//!`) comments
            end = src.find("\n", i)
            i = n if end < 0 else end
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            line += src.count("\n", i, j)
            i = j
        elif c == "#" and (src.startswith("#[", i) or src.startswith("#![", i)):
            inner = src.startswith("#![", i)
            start = i + (3 if inner else 2)
            depth, j = 1, start
            while j < n and depth:
                if src[j] == '"':
                    j = _string_end(src, j)
                    continue
                depth += {"[": 1, "]": -1}.get(src[j], 0)
                j += 1
            if not inner:  # inner attributes (`#![allow(...)]`) say nothing about the wire
                toks.append(Tok("attr", " ".join(src[start:j - 1].split()), line))
            line += src.count("\n", i, j)
            i = j
        else:
            m = re.match(r'[bc]?r(#*)"', src[i:i + 12])
            if m:  # raw string
                start = i + m.end()
                end = src.find('"' + m.group(1), start)
                end = n if end < 0 else end
                toks.append(Tok("str", src[start:end], line))
                line += src.count("\n", i, end)
                i = end + 1 + len(m.group(1))
                continue
            if c == '"' or src.startswith('b"', i):
                q = i if c == '"' else i + 1
                j = _string_end(src, q)
                toks.append(Tok("str", _unescape(src[q + 1:j - 1]), line))
                line += src.count("\n", i, j)
                i = j
                continue
            if c == "'":
                m = re.match(r"'(\\.[^']*|[^\\'])'", src[i:i + 12])
                if m:  # char literal
                    toks.append(Tok("str", _unescape(m.group(1)), line))
                    i += m.end()
                    continue
                m = re.match(r"'[A-Za-z_][A-Za-z0-9_]*", src[i:i + 100])
                if m:
                    toks.append(Tok("lifetime", m.group(0), line))
                    i += m.end()
                    continue
                i += 1
                continue
            m = re.match(r"r#[A-Za-z_]\w*|[A-Za-z_]\w*", src[i:i + 200])
            if m:
                toks.append(Tok("ident", m.group(0), line))
                i += m.end()
                continue
            m = re.match(r"[0-9][0-9_]*(?:\.[0-9][0-9_]*)?(?:[eE][+-]?[0-9]+)?\w*", src[i:i + 60])
            if m:
                toks.append(Tok("num", m.group(0), line))
                i += m.end()
                continue
            p = next((p for p in PUNCTS if src.startswith(p, i)), c)
            toks.append(Tok("punct", p, line))
            i += len(p)
    return toks


def int_literal(text):
    """`-32039`, `1_000`, `100u64` -> int; ValueError otherwise."""
    m = re.fullmatch(r"(-?)([0-9][0-9_]*)(?:[iu](?:8|16|32|64|128|size))?", text.replace(" ", ""))
    if not m:
        raise ValueError(f"not an integer literal: {text}")
    value = int(m.group(2).replace("_", ""))
    return -value if m.group(1) else value


# =============================================================================================
# Parsing: structs, enums, impl blocks, functions, type aliases and constants.
# =============================================================================================

def match_close(toks, i):
    """Index of the token closing the bracket at toks[i] (len(toks) when unbalanced)."""
    depth = 0
    for j in range(i, len(toks)):
        if toks[j].kind != "punct":
            continue
        if toks[j].text in OPEN:
            depth += 1
        elif toks[j].text in CLOSE:
            depth -= 1
            if depth == 0:
                return j
    return len(toks)


def skip_generics(toks, i):
    """Index past a `<...>` group at toks[i], or i when there is none."""
    if i >= len(toks) or toks[i].text != "<":
        return i
    depth = 0
    while i < len(toks):
        depth += {"<": 1, ">": -1}.get(toks[i].text, 0)
        i += 1
        if depth == 0:
            break
    return i


def split_top(toks, sep=","):
    """Split a token list at `sep` outside any bracket or angle-bracket group."""
    parts, cur, depth, angle = [], [], 0, 0
    for t in toks:
        if t.kind == "punct":
            if t.text in OPEN:
                depth += 1
            elif t.text in CLOSE:
                depth -= 1
            elif t.text == "<":
                angle += 1
            elif t.text == ">" and angle:
                angle -= 1
            elif t.text == sep and depth == 0 and angle == 0:
                parts.append(cur)
                cur = []
                continue
        cur.append(t)
    if cur:
        parts.append(cur)
    return parts


def type_text(toks):
    """A compact spelling of a type, as `Option<Vec<crate::x::Y>>` (lifetimes dropped)."""
    out, after_word = "", False
    for t in toks:
        if t.kind == "lifetime":
            continue
        word = t.kind == "ident"
        out += (" " if word and after_word else "") + t.text
        after_word = word
    return out


def tuple_types(toks):
    """Member types of a tuple struct or variant, without docs, attributes or `pub`."""
    types = []
    for part in split_top(toks):
        _, _, k = lead(part)
        if k < len(part) and part[k].text == "pub":
            k += 1
            if k < len(part) and part[k].text == "(":
                k = match_close(part, k) + 1
        if k < len(part):
            types.append(type_text(part[k:]))
    return types


def lead(part):
    """Split the docs and attributes off the front of a field or variant's tokens."""
    docs, attrs, k = [], [], 0
    while k < len(part) and part[k].kind in ("doc", "attr"):
        (docs if part[k].kind == "doc" else attrs).append(part[k].text)
        k += 1
    return docs, attrs, k


class Field:
    def __init__(self, name, ty, docs, attrs):
        self.name, self.ty, self.docs, self.attrs = name, ty, docs, attrs


class Variant:
    def __init__(self, name, docs, attrs, shape, payload):
        self.name, self.docs, self.attrs = name, docs, attrs
        self.shape = shape  # unit | tuple | struct
        self.payload = payload  # type strings (tuple) or Fields (struct)


class Item:
    def __init__(self, kind, name, docs, attrs, public, path):
        self.kind, self.name, self.docs, self.attrs = kind, name, docs, attrs
        self.public, self.path = public, path
        self.fields = []  # named fields of a struct
        self.tuple = None  # member types of a tuple struct
        self.variants = []  # variants of an enum


class Impl:
    def __init__(self, target, trait, body):
        self.target, self.trait, self.body = target, trait, body


def parse_fields(toks):
    fields = []
    for part in split_top(toks):
        docs, attrs, k = lead(part)
        if k < len(part) and part[k].text == "pub":
            k += 1
            if k < len(part) and part[k].text == "(":
                k = match_close(part, k) + 1
        if k + 1 < len(part) and part[k].kind == "ident" and part[k + 1].text == ":":
            name = part[k].text[2:] if part[k].text.startswith("r#") else part[k].text
            fields.append(Field(name, type_text(part[k + 2:]), docs, attrs))
    return fields


def parse_variants(toks):
    variants = []
    for part in split_top(toks):
        docs, attrs, k = lead(part)
        if k >= len(part) or part[k].kind != "ident":
            continue
        name, k = part[k].text, k + 1
        shape, payload = "unit", []
        if k < len(part) and part[k].text == "(":
            shape = "tuple"
            payload = tuple_types(part[k + 1:match_close(part, k)])
        elif k < len(part) and part[k].text == "{":
            shape = "struct"
            payload = parse_fields(part[k + 1:match_close(part, k)])
        variants.append(Variant(name, docs, attrs, shape, payload))
    return variants


class Crate:
    def __init__(self):
        self.items = {}  # type name -> Item (a public type wins over a private one)
        self.impls = []
        self.aliases = {}  # `type X = Y;` -> "Y"
        self.consts = {}  # free constant -> str | int | ("name", OTHER)
        self.assoc_consts = {}  # type name -> {CONST: value}
        self.functions = {}  # "fn" or "Type::fn" -> (param names, body tokens, owner type)
        self.files = 0
        self.problems = []
        self.version = None
        self.calls = {}


VISIBILITY = {"pub", "crate", "super", "self", "in", "unsafe", "async", "extern"}


def parse_file(crate, path, src):
    toks = lex(src)
    crate.files += 1
    docs, attrs = [], []
    impls = []  # (end index, target type) of the impl blocks we are inside
    i, n = 0, len(toks)
    while i < n:
        while impls and i >= impls[-1][0]:
            impls.pop()
        t = toks[i]
        if t.kind in ("doc", "attr"):
            (docs if t.kind == "doc" else attrs).append(t.text)
            i += 1
            continue
        if t.kind == "ident" and t.text in VISIBILITY:
            i += 1
            continue
        if t.kind == "punct" and t.text == "(" and i and toks[i - 1].text == "pub":
            i = match_close(toks, i) + 1  # `pub(crate)`, `pub(super)`, `pub(in path)`
            continue
        try:
            step = _parse_item(crate, toks, i, docs, attrs, impls, path)
        except (IndexError, ValueError, KeyError) as exc:  # odd Rust: note it, move on
            crate.problems.append(f"{path}:{t.line}: item not read ({exc})")
            step = None
        if step is not None:
            i = step
        else:
            i += 1
        docs, attrs = [], []


def _is_public(toks, i):
    """Whether the item keyword at toks[i] is declared plain `pub` (not `pub(crate)`)."""
    j = i - 1
    while j >= 0 and toks[j].kind == "ident" and toks[j].text in ("unsafe", "async", "extern", "const"):
        j -= 1
    return j >= 0 and toks[j].text == "pub"


def _parse_item(crate, toks, i, docs, attrs, impls, path):
    """Read the item starting at toks[i], if it is one we keep; return the index after it."""
    n, t = len(toks), toks[i]
    if t.kind != "ident" or i + 1 >= n:
        return None
    name_tok = toks[i + 1]
    owner = impls[-1][1] if impls else None
    if t.text in ("struct", "enum") and name_tok.kind == "ident":
        item = Item(t.text, name_tok.text, docs, attrs, _is_public(toks, i), path)
        j = skip_generics(toks, i + 2)
        if j < n and toks[j].text == "where":
            while j < n and toks[j].text not in ("{", ";"):
                j += 1
        end = j
        if j < n and toks[j].text == "{":
            end = match_close(toks, j)
            if item.kind == "struct":
                item.fields = parse_fields(toks[j + 1:end])
            else:
                item.variants = parse_variants(toks[j + 1:end])
        elif j < n and toks[j].text == "(":
            end = match_close(toks, j)
            item.tuple = tuple_types(toks[j + 1:end])
        old = crate.items.get(item.name)
        if old is None or (item.public and not old.public):
            crate.items[item.name] = item
        return end + 1
    if t.text == "impl":
        j = skip_generics(toks, i + 1)
        head = []
        while j < n and toks[j].text not in ("{", ";"):
            head.append(toks[j])
            j += 1
        if j >= n or toks[j].text != "{":
            return j + 1
        words = [h.text for h in head]
        if "for" in words:
            k = words.index("for")
            trait = type_text(head[:k])
            target = next((h.text for h in head[k + 1:] if h.kind == "ident"), None)
        else:
            trait = None
            path_idents = []
            for h in head:
                if h.text in ("<", "where"):
                    break
                if h.kind == "ident":
                    path_idents.append(h.text)
            target = path_idents[-1] if path_idents else None
        end = match_close(toks, j)
        crate.impls.append(Impl(target, trait, toks[j + 1:end]))
        impls.append((end, target))
        return j + 1  # step inside: associated constants and functions are read too
    if t.text == "type" and name_tok.kind == "ident":
        j = skip_generics(toks, i + 2)
        if j < n and toks[j].text == "=":
            k = j + 1
            while k < n and toks[k].text != ";":
                k += 1
            crate.aliases[name_tok.text] = type_text(toks[j + 1:k])
            return k + 1
        return j
    if t.text == "const" and name_tok.kind == "ident" and name_tok.text != "fn":
        k = i + 2
        while k < n and toks[k].text not in ("=", ";"):
            k += 1
        if k >= n or toks[k].text != "=":
            return k + 1
        e = k + 1
        while e < n and toks[e].text != ";":
            e += 1
        value = toks[k + 1:e]
        literal = None
        if len(value) == 1 and value[0].kind == "str":
            literal = value[0].text
        elif value and all(v.kind == "num" or v.text == "-" for v in value):
            literal = int_literal("".join(v.text for v in value))
        elif len(value) == 1 and value[0].kind == "ident":
            literal = ("name", value[0].text)
        if literal is not None:
            if owner:
                crate.assoc_consts.setdefault(owner, {})[name_tok.text] = literal
            else:
                crate.consts[name_tok.text] = literal
        return e + 1
    if t.text == "fn" and name_tok.kind == "ident":
        j = skip_generics(toks, i + 2)
        if j >= n or toks[j].text != "(":
            return j
        close = match_close(toks, j)
        params = [p[0].text for p in split_top(toks[j + 1:close]) if p and p[0].kind == "ident"]
        k = close + 1
        while k < n and toks[k].text not in ("{", ";"):
            k += 1
        if k >= n or toks[k].text != "{":
            return k + 1
        end = match_close(toks, k)
        key = f"{owner}::{name_tok.text}" if owner else name_tok.text
        crate.functions[key] = (params, toks[k + 1:end], owner)
        return end + 1
    return None


def read_crate(root):
    crate = Crate()
    files = sorted(glob.glob(os.path.join(root, "src", "msp", "**", "*.rs"), recursive=True))
    if os.path.exists(os.path.join(root, "src", "msp.rs")):
        files.insert(0, os.path.join(root, "src", "msp.rs"))
    for path in files:
        rel = os.path.relpath(path, root)
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                parse_file(crate, rel, fh.read())
        except Exception as exc:  # noqa: BLE001 - one unreadable file must not stop the run
            crate.problems.append(f"{rel}: skipped ({type(exc).__name__}: {exc})")
    manifest = os.path.join(root, "Cargo.toml")
    if os.path.exists(manifest):
        with open(manifest, encoding="utf-8", errors="replace") as fh:
            m = re.search(r'^\s*version\s*=\s*"([^"]+)"', fh.read(), re.M)
        crate.version = m.group(1) if m else None
    crate.calls = sdk_calls(root)
    return crate


def sdk_calls(root):
    """`.command::<_, ResultType>("method", ...)` anywhere in the SDK: method -> result types."""
    calls = {}
    pattern = re.compile(r'\.command::<\s*[^,>]+,\s*([A-Za-z_][\w:]*)\s*>\s*\(\s*"([^"]+)"')
    for path in glob.glob(os.path.join(root, "src", "**", "*.rs"), recursive=True):
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                src = fh.read()
        except OSError:
            continue
        for m in pattern.finditer(src):
            result = m.group(1).split("::")[-1]
            if result != "Value":  # read untyped: no fact
                calls.setdefault(m.group(2), set()).add(result)
    return calls


# =============================================================================================
# Serde attributes, names and types.
# =============================================================================================

def serde_args(attrs):
    """The arguments of every `#[serde(...)]` in attrs, as {key: value or True}."""
    out = {}
    for a in attrs:
        m = re.fullmatch(r"serde\s*\((.*)\)\s*", a, re.S)
        if not m:
            continue
        for part in _split_commas(m.group(1)):
            part = part.strip()
            if "=" in part:
                key, value = part.split("=", 1)
                value = value.strip()
                out[key.strip()] = value[1:-1] if value[:1] == '"' and value[-1:] == '"' else value
            elif part:
                out[part] = True
    return out


def _split_commas(s):
    parts, cur, depth, quoted = [], "", 0, False
    for c in s:
        if c == '"':
            quoted = not quoted
        elif not quoted and c in "([":
            depth += 1
        elif not quoted and c in ")]":
            depth -= 1
        if c == "," and depth == 0 and not quoted:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    return parts + [cur]


def derives(attrs):
    out = set()
    for a in attrs:
        m = re.fullmatch(r"derive\s*\((.*)\)\s*", a, re.S)
        if m:
            out |= {d.strip().split("::")[-1] for d in m.group(1).split(",") if d.strip()}
    return out


def words(name):
    """Lower-case words of a Rust identifier, snake_case or CamelCase."""
    if "_" in name or name.islower():
        return [w for w in name.lower().split("_") if w]
    return [w.lower() for w in re.findall(r"[A-Z]+(?=[A-Z][a-z0-9]|$)|[A-Z]?[a-z0-9]+|[A-Z]+", name)]


def rename(name, rule):
    """A field or variant name under a serde `rename_all` rule."""
    w = words(name)
    if not rule or not w:
        return name
    spell = {
        "camelCase": lambda: w[0] + "".join(x.capitalize() for x in w[1:]),
        "PascalCase": lambda: "".join(x.capitalize() for x in w),
        "snake_case": lambda: "_".join(w),
        "SCREAMING_SNAKE_CASE": lambda: "_".join(w).upper(),
        "kebab-case": lambda: "-".join(w),
        "SCREAMING-KEBAB-CASE": lambda: "-".join(w).upper(),
        "lowercase": lambda: "".join(w),
        "UPPERCASE": lambda: "".join(w).upper(),
    }.get(rule)
    return spell() if spell else name


def generic_args(ty, outer):
    """The inside of `outer<...>` when ty is that constructor (any path prefix), else None."""
    base = ty.split("<", 1)[0].split("::")[-1]
    if base == outer and "<" in ty and ty.endswith(">"):
        return ty[ty.index("<") + 1:-1]
    return None


def split_generic(args):
    parts, depth, cur = [], 0, ""
    for c in args:
        depth += {"<": 1, ">": -1}.get(c, 0)
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    return parts + [cur]


def option_depth(ty):
    """(number of `Option<...>` wrappers, the type inside them)."""
    depth = 0
    while True:
        inner = generic_args(ty, "Option")
        if inner is None:
            return depth, ty
        depth, ty = depth + 1, inner


INTEGERS = {"i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize"}
NUMBERS = {"f32", "f64", "Number"}


def rust_shape(crate, ty, seen=frozenset()):
    """The JSON shape of a Rust type: (kind,) for string, integer, number, boolean, object and
    any; ("array", inner), ("map", inner) or ("ref", TypeName)."""
    ty = ty.strip().lstrip("&")
    for wrapper in ("Box", "Arc", "Rc", "Cow", "Option"):
        inner = generic_args(ty, wrapper)
        if inner is not None:
            return rust_shape(crate, split_generic(inner)[-1], seen)
    for seq in ("Vec", "VecDeque", "BTreeSet", "HashSet"):
        inner = generic_args(ty, seq)
        if inner is not None:
            return ("array", rust_shape(crate, inner, seen))
    for mapping in ("BTreeMap", "HashMap", "IndexMap"):
        inner = generic_args(ty, mapping)
        if inner is not None:
            return ("map", rust_shape(crate, split_generic(inner)[-1], seen))
    if generic_args(ty, "Map") is not None:
        return ("object",)
    if ty.startswith("[") and ty.endswith("]"):
        return ("array", rust_shape(crate, ty[1:-1].split(";")[0], seen))
    base = ty.split("<", 1)[0].split("::")[-1]
    if base in ("String", "str"):
        return ("string",)
    if base == "bool":
        return ("boolean",)
    if base in INTEGERS:
        return ("integer",)
    if base in NUMBERS:
        return ("number",)
    if base == "Value":
        return ("any",)
    if base in crate.aliases and base not in seen:
        return rust_shape(crate, crate.aliases[base], seen | {base})
    return ("ref", base)


# =============================================================================================
# What doc comments state.
# =============================================================================================

EXPERIMENTAL_DOC = re.compile(
    r"\*\*Experimental\b|\bExperimental(?:-tier\b| tier\b|[:,.;]| \(| like\b| \u2014| -)"
    r"|\bexperimental tier\b|stripped per-connection for unopted|stripped for unopted")
STABLE_DOC = re.compile(
    r"\b[Ss]table from day one\b|\bv1 stable member\b|\bplain stable\b|no `x-msp-stability` marker")
NULL_ALLOWED_DOC = re.compile(r"(?:[Oo]mitted|[Aa]bsent)\s+(?:and|or)\s+explicit\s+`null`")
NULL_REFUSED_DOC = re.compile(r"\bnever\s+`null`|[Ee]xplicit\s+`null`\s+is\s+invalid")


def doc_stability(docs):
    """"experimental", "stable" or None: only affirmative words count, silence is no claim."""
    text = " ".join(docs)
    if EXPERIMENTAL_DOC.search(text):
        return "experimental"
    if STABLE_DOC.search(text):
        return "stable"
    return None


def doc_nullability(docs):
    """An optional `Option<T>` reads `null` as absent, so only its docs can say whether `null`
    is part of the contract: True, False or None (not said)."""
    text = " ".join(docs)
    if NULL_REFUSED_DOC.search(text):
        return False
    if NULL_ALLOWED_DOC.search(text):
        return True
    return None


# =============================================================================================
# From Rust items to wire facts.
# =============================================================================================

class WireMember:
    def __init__(self, required, nullable, shape, stability, origin):
        self.required = required  # True | False | None (unknown)
        self.nullable = nullable  # True | False | None (unknown)
        self.shape = shape
        self.stability = stability  # "experimental" | "stable" | None
        self.origin = origin  # the Rust type, for messages


class WireType:
    def __init__(self, name, kind, item):
        self.name = name
        self.kind = kind  # object | enum | union | alias | opaque
        self.item = item
        self.stability = doc_stability(item.docs)
        self.inline = False  # only ever flattened into another type
        self.members = {}  # object: wire name -> WireMember
        self.partial = False  # object: part of it is hand-serialized, its member set unsure
        self.values = []  # enum words or union tags
        self.value_stability = {}
        self.openness = None  # open | lossy | closed
        self.lossy_how = None
        self.tag = None  # union: the tag member
        self.shape = None  # alias: the inner shape


def tolerant_decoder(crate, deser):
    """Whether a `deserialize_with` function turns a value it cannot read into absence."""
    fn = crate.functions.get(deser.split("::")[-1])
    if fn is None:
        return False
    body = [t.text for t in fn[1]]
    return any(body[k:k + 4] == [".", "ok", "(", ")"] for k in range(len(body)))


def member_facts(crate, field, container_default):
    args = serde_args(field.attrs)
    if "skip" in args or ("skip_serializing" in args and "skip_deserializing" in args):
        return None
    depth, inner = option_depth(field.ty)
    skipped = "skip_serializing_if" in args
    defaulted = "default" in args or container_default
    deser = str(args.get("deserialize_with", ""))
    if depth == 0:
        required, nullable = not (skipped or defaulted), False
    elif depth >= 2:
        required, nullable = False, True  # absent, `null` and a value kept apart
    elif not skipped:
        required, nullable = True, True  # always written: `null` when empty
    else:
        required = False
        nullable = False if "non_null" in deser else doc_nullability(field.docs)
    return WireMember(required, nullable, rust_shape(crate, inner), doc_stability(field.docs), field.ty)


def written_keys(crate, name):
    """Keys a hand-written `Serialize` impl writes with `serialize_entry("key", ...)`."""
    keys = []
    for imp in crate.impls:
        if imp.target == name and imp.trait and imp.trait.endswith("Serialize"):
            body = imp.body
            for k in range(len(body) - 2):
                entry = body[k].text == "serialize_entry" and body[k + 1].text == "("
                if entry and body[k + 2].kind == "str" and body[k + 2].text not in keys:
                    keys.append(body[k + 2].text)
    return keys


def object_members(crate, item, wt, flattened):
    container = serde_args(item.attrs)
    rule = container.get("rename_all")
    for f in item.fields:
        args = serde_args(f.attrs)
        if "flatten" in args:
            shape = rust_shape(crate, option_depth(f.ty)[1])
            sub = crate.items.get(shape[1]) if shape[0] == "ref" else None
            if sub is not None and sub.kind == "struct" and sub.tuple is None:
                flattened.add(sub.name)
                object_members(crate, sub, wt, flattened)
                continue
            if sub is not None:
                flattened.add(sub.name)
                for key in written_keys(crate, sub.name):
                    origin = f"{sub.name}, hand-written"
                    wt.members.setdefault(key, WireMember(None, None, None, None, origin))
            wt.partial = True
            continue
        m = member_facts(crate, f, "default" in container)
        if m is not None:
            wt.members[args.get("rename") or rename(f.name, rule)] = m


def word_table(crate, name):
    """The words of a hand-serialized enum, [(variant, word)], and how its `Deserialize`
    treats another word: ("keeps", None), ("maps", variant), ("refuses", None) or None."""
    found, fallback = [], None
    for imp in crate.impls:
        if imp.target != name:
            continue
        body = imp.body
        is_de = bool(imp.trait and "Deserialize" in imp.trait)

        def variant_at(j):
            if j < len(body) and body[j].text == "Ok" and j + 1 < len(body) and body[j + 1].text == "(":
                j += 2
            if j + 2 < len(body) and body[j].text in ("Self", name) and body[j + 1].text == "::":
                return j + 2
            return None

        for k, t in enumerate(body):
            # Self::Variant => "word"
            if t.text in ("Self", name) and k + 4 < len(body) and body[k + 1].text == "::" \
                    and body[k + 2].kind == "ident" and body[k + 3].text == "=>" \
                    and body[k + 4].kind == "str":
                pair = (body[k + 2].text, body[k + 4].text)
                if pair not in found:
                    found.append(pair)
            # "word" => Self::Variant    /    "word" => Ok(Self::Variant)
            if t.kind == "str" and k + 1 < len(body) and body[k + 1].text == "=>":
                v = variant_at(k + 2)
                if v is not None and (body[v].text, t.text) not in found:
                    found.append((body[v].text, t.text))
            # _ => ...  (the fallback arm of the decoder)
            if is_de and t.text == "_" and k + 1 < len(body) and body[k + 1].text == "=>":
                j = k + 2
                v = variant_at(j)
                if j < len(body) and body[j].text in ("Err", "return"):
                    fallback = fallback or ("refuses", None)
                elif v is not None and v + 1 < len(body) and body[v + 1].text == "(":
                    fallback = ("keeps", None)
                elif v is not None:
                    fallback = fallback or ("maps", body[v].text)
    return found, fallback


def enum_facts(crate, name, item, d, container):
    wt = WireType(name, "enum", item)
    table, fallback = word_table(crate, name)
    word_of = {}
    for variant, word in table:
        word_of.setdefault(variant, word)
    derived = "Serialize" in d or "Deserialize" in d
    keeps = drops = None
    for v in item.variants:
        va = serde_args(v.attrs)
        if "other" in va:
            drops = f"its catch-all variant {v.name} cannot be re-encoded"
            continue
        if v.shape != "unit" and v.name not in word_of:
            payload = option_depth(v.payload[0])[1] if v.shape == "tuple" and v.payload else ""
            if "untagged" in va or payload.split("::")[-1] == "String" or v.shape == "struct":
                keeps = v.name  # an arm that keeps the unknown word (and any payload)
                continue
        word = word_of.get(v.name)
        if word is None and derived:
            word = va.get("rename") or rename(v.name, container.get("rename_all"))
        if word is None:
            continue
        wt.values.append(word)
        wt.value_stability[word] = doc_stability(v.docs)
    if keeps or (fallback and fallback[0] == "keeps"):
        wt.openness = "open"
    elif fallback and fallback[0] == "maps":
        wt.openness = "lossy"
        mapped = word_of.get(fallback[1]) or rename(fallback[1], container.get("rename_all"))
        wt.lossy_how = f"its decoder reads an unknown word as `{mapped}`"
    elif drops:
        wt.openness, wt.lossy_how = "lossy", drops
    else:
        wt.openness = "closed"
    if not wt.values and not derived:
        wt.kind = "opaque"  # hand-serialized without a word table: not compared
    return wt


def build_types(crate):
    types, flattened = {}, set()
    for name, item in sorted(crate.items.items()):
        if not item.public:
            continue
        d = derives(item.attrs)
        container = serde_args(item.attrs)
        manual = any(i.target == name and i.trait and ("Serialize" in i.trait or "Deserialize" in i.trait)
                     for i in crate.impls)
        if not ({"Serialize", "Deserialize"} & d or manual):
            continue  # not a wire type
        if item.kind == "struct" and item.tuple is not None:
            words_ = [v for v in crate.assoc_consts.get(name, {}).values() if isinstance(v, str)]
            if "transparent" in container and words_:
                wt = WireType(name, "enum", item)  # a string newtype with named words: open enum
                wt.values, wt.openness = words_, "open"
            else:
                wt = WireType(name, "alias", item)
                wt.shape = rust_shape(crate, item.tuple[0]) if item.tuple else ("any",)
        elif item.kind == "struct":
            wt = WireType(name, "object", item)
            object_members(crate, item, wt, flattened)
        elif "untagged" in container:
            wt = WireType(name, "union", item)
        elif "tag" in container:
            wt = WireType(name, "union", item)
            wt.tag = container["tag"]
            wt.openness = "closed"
            for v in item.variants:
                va = serde_args(v.attrs)
                if "other" in va:
                    wt.openness = "lossy"
                else:
                    wt.values.append(va.get("rename") or rename(v.name, container.get("rename_all")))
        else:
            wt = enum_facts(crate, name, item, d, container)
        types[name] = wt
    for name in flattened:
        if name in types:
            types[name].inline = True
    # A member decoder that turns an unreadable value into absence makes a closed enum lossy.
    for wt in list(types.values()):
        if wt.kind != "object":
            continue
        for f in wt.item.fields:
            deser = str(serde_args(f.attrs).get("deserialize_with", ""))
            if not deser or not tolerant_decoder(crate, deser):
                continue
            shape = rust_shape(crate, option_depth(f.ty)[1])
            target = types.get(shape[1]) if shape[0] == "ref" else None
            if target is not None and target.kind == "enum" and target.openness == "closed":
                target.openness = "lossy"
                target.lossy_how = f"{wt.name}.{f.name} reads an unknown word as absent ({deser})"
    return types


# =============================================================================================
# Error registry and methods.
# =============================================================================================

class ErrorRow:
    def __init__(self, code, kind, overrides, retryable, experimental, origin):
        self.code, self.kind, self.overrides = code, kind, overrides
        self.retryable = retryable  # True | False | None (no value)
        self.experimental = experimental
        self.origin = origin


def evaluate(crate, toks, env, depth=0):
    """Evaluate the small expression language of registry rows: integer and string literals,
    named constants, `Some(x)`, `None`, `true`/`false`, `&[a, b]`, `Enum::Variant`, calls of
    the crate's row helpers, blocks, and struct literals `Self { field: value, .. }` (as dicts)."""
    if depth > 16:
        raise ValueError("expression nests too deep")
    while toks and toks[0].text == "&":
        toks = toks[1:]
    if not toks:
        raise ValueError("empty expression")
    first, last = toks[0].text, toks[-1].text
    if first == "{" and last == "}" and match_close(toks, 0) == len(toks) - 1:
        return evaluate(crate, split_top(toks[1:-1], ";")[-1], env, depth + 1)
    if len(toks) == 1:
        t = toks[0]
        if t.kind == "num":
            return int_literal(t.text)
        if t.kind == "str":
            return t.text
        if t.text in ("true", "false"):
            return t.text == "true"
        if t.text == "None":
            return None
        if t.text in env:
            return env[t.text]
        if t.text in crate.consts:
            value = crate.consts[t.text]
            if isinstance(value, tuple):
                return evaluate(crate, [Tok("ident", value[1], t.line)], env, depth + 1)
            return value
        raise ValueError(f"unknown name {t.text}")
    if first == "-" and len(toks) == 2:
        return -evaluate(crate, toks[1:], env, depth + 1)
    if first == "[" and last == "]":
        return [evaluate(crate, p, env, depth + 1) for p in split_top(toks[1:-1]) if p]
    if len(toks) == 3 and toks[1].text == "::" and first != "Self":
        return ("variant", first, toks[2].text)
    if toks[0].kind == "ident" and toks[1].text == "{" and match_close(toks, 1) == len(toks) - 1:
        # a struct literal, `Self { code, kind, retryable: x, .. }`
        out = {}
        for p in split_top(toks[2:match_close(toks, 1)]):
            if len(p) == 1:
                out[p[0].text] = evaluate(crate, p, env, depth + 1)
            elif len(p) > 2 and p[1].text == ":":
                out[p[0].text] = evaluate(crate, p[2:], env, depth + 1)
        return out
    k = next((k for k, t in enumerate(toks) if t.text == "("), None)
    if k is None or match_close(toks, k) != len(toks) - 1:
        raise ValueError("unreadable expression " + type_text(toks)[:60])
    callee = [t.text for t in toks[:k] if t.kind == "ident"]
    if not callee:
        raise ValueError("unreadable call " + type_text(toks)[:60])
    args = [evaluate(crate, p, env, depth + 1) for p in split_top(toks[k + 1:-1]) if p]
    fname = callee[-1]
    if fname == "Some" and len(args) == 1:
        return args[0]
    owner = env.get("Self")
    if len(callee) >= 2 and callee[-2] != "Self":
        owner = callee[-2]
    keys = ([f"{owner}::{fname}"] if owner else []) + [fname]
    keys += sorted(key for key in crate.functions if key.endswith("::" + fname))
    for key in keys:
        if key in crate.functions:
            params, body, fowner = crate.functions[key]
            scope = dict(zip(params, args))
            scope["Self"] = fowner or owner
            return evaluate(crate, body, scope, depth + 1)
    raise ValueError(f"unknown function {fname}")


def kind_word(value, types):
    """An `ErrorKind::Variant` value as its wire word."""
    if not (isinstance(value, tuple) and value[0] == "variant"):
        return value
    wt = types.get(value[1])
    if wt is not None:
        rule = serde_args(wt.item.attrs).get("rename_all")
        for v in wt.item.variants:
            if v.name == value[2]:
                return serde_args(v.attrs).get("rename") or rename(v.name, rule)
    return rename(value[2], "camelCase")


def match_arms(toks):
    """The arms of a `match` body: split at top-level commas and after `=> { ... }` blocks."""
    arms, cur, i = [], [], 0
    while i < len(toks):
        t = toks[i]
        if t.kind == "punct" and t.text in OPEN:
            end = match_close(toks, i)
            block_arm = t.text == "{" and cur and cur[-1].text == "=>"
            cur.extend(toks[i:end + 1])
            i = end + 1
            if block_arm and (i >= len(toks) or toks[i].text != ","):
                arms.append(cur)
                cur = []
            continue
        if t.kind == "punct" and t.text == ",":
            arms.append(cur)
            cur = []
        else:
            cur.append(t)
        i += 1
    return arms + ([cur] if cur else [])


def read_errors(crate, types):
    """The registry rows: each arm `Self::Code => <row>` of a `fn definition` match."""
    rows, problems = [], []
    for imp in crate.impls:
        body = imp.body
        for k in range(len(body) - 1):
            if body[k].text != "fn" or body[k + 1].text != "definition":
                continue
            j = k + 2
            while j < len(body) and body[j].text != "{":
                j += 1
            end = match_close(body, j)
            m = next((m for m in range(j, end) if body[m].text == "match"), None)
            if m is None:
                continue
            while m < end and body[m].text != "{":
                m += 1
            for arm in match_arms(body[m + 1:match_close(body, m)]):
                if len(arm) < 5 or arm[0].text != "Self" or arm[3].text != "=>":
                    continue
                variant = arm[2].text
                try:
                    row = evaluate(crate, arm[4:], {})
                except (ValueError, IndexError, KeyError) as exc:
                    problems.append(f"error row {imp.target}::{variant} not read ({exc})")
                    continue
                if not isinstance(row, dict) or not isinstance(row.get("code"), int):
                    problems.append(f"error row {imp.target}::{variant} has no code")
                    continue
                rows.append(ErrorRow(row["code"], kind_word(row.get("kind"), types),
                                     [kind_word(o, types) for o in row.get("override_kinds") or []],
                                     row.get("retryable"), bool(row.get("experimental")),
                                     f"{imp.target}::{variant}"))
    return rows, problems


METHOD_NAME = r"`([a-z][A-Za-z]*/[a-z][A-Za-z]*)`"
# `a/b` words in docs that are not method names: media types and placeholders.
NOT_METHODS = {"text", "image", "video", "audio", "application", "multipart", "font", "model", "message",
               "owner"}


def all_docs(item):
    out = list(item.docs)
    for f in item.fields:
        out += f.docs
    for v in item.variants:
        out += v.docs
        if v.shape == "struct":
            for f in v.payload:
                out += f.docs
    return out


def doc_methods(types, tables):
    """(bindings [(method, "params"|"result", type)], {method named in docs: file}).
    A params/result type whose doc opens with method names is bound to them: "`a/b` params",
    "`a/b` result", "Params for `a/b` and `c/d`", "Full params shared by `a/b` and `c/d`"."""
    bound, named = [], {}
    known = {m for t in tables.values() for m in t}
    for wt in types.values():
        for m in re.finditer(METHOD_NAME, " ".join(all_docs(wt.item))):
            if m.group(1) in known or m.group(1).split("/")[0] not in NOT_METHODS:
                named.setdefault(m.group(1), wt.item.path)
        part = "params" if wt.name.endswith("Params") else "result" if wt.name.endswith("Result") else None
        text = " ".join(wt.item.docs)
        if part is None or not text:
            continue
        first = re.split(r"(?<=[.:])\s", text, maxsplit=1)[0]
        names = rf"((?:(?:the\s+)?{METHOD_NAME}(?:,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+|\s*/\s*)?)+)"
        opening = re.match(rf"^(?:The\s+)?{names}\s*(?:request\s+)?(params|result)\b", first)
        shared = re.match(rf"^(?:Full\s+)?(params|result)s?\s+(?:for|of|shared by)\s+{names}", first, re.I)
        methods = []
        if opening and opening.groups()[-1] == part:
            methods = re.findall(METHOD_NAME, opening.group(1))
        elif shared and shared.group(1).lower() == part:
            methods = re.findall(METHOD_NAME, shared.group(2))
        bound += [(method, part, wt.name) for method in methods]
    return bound, named


# =============================================================================================
# The schema side.
# =============================================================================================

def esc(token):
    return str(token).replace("~", "~0").replace("/", "~1")


def experimental(node):
    return isinstance(node, dict) and node.get("x-msp-stability") == "experimental"


def schema_nullable(node):
    t = node.get("type")
    if isinstance(t, list) and "null" in t:
        return True
    arms = node.get("anyOf", []) + node.get("oneOf", [])
    return any(isinstance(a, dict) and a.get("type") == "null" for a in arms)


def schema_shape(node):
    """The JSON shape of a schema node, in rust_shape's terms (plus ("enum",), ("union",))."""
    if not isinstance(node, dict) or not node:
        return ("any",)
    if "$ref" in node:
        return ("ref", node["$ref"].split("/")[-1].replace("~1", "/").replace("~0", "~"))
    if "anyOf" in node or "oneOf" in node:
        arms = [a for a in node.get("anyOf", []) if not (isinstance(a, dict) and a.get("type") == "null")]
        return schema_shape(arms[0]) if "anyOf" in node and len(arms) == 1 else ("union",)
    t = node.get("type")
    if isinstance(t, list):
        rest = [x for x in t if x != "null"]
        t = rest[0] if len(rest) == 1 else None
    if t == "array":
        return ("array", schema_shape(node.get("items", {})))
    if t == "object":
        ap = node.get("additionalProperties")
        if isinstance(ap, dict) and not node.get("properties"):
            return ("map", schema_shape(ap))
        return ("object",)
    if t == "string" and "enum" in node:
        return ("enum",)
    if t in ("string", "integer", "number", "boolean"):
        return (t,)
    if "const" in node:
        return ("string",)
    return ("any",)


def schema_members(d):
    """{name: (node, required, pointer suffix)} of an object, or of every arm of a `oneOf` of
    objects (required only when every arm that has it requires it)."""
    out = {}
    req = set(d.get("required", []))
    for k, v in d.get("properties", {}).items():
        out[k] = (v, k in req, f"/properties/{esc(k)}")
    for i, arm in enumerate(d.get("oneOf", [])):
        if not isinstance(arm, dict):
            continue
        arm_req = set(arm.get("required", []))
        for k, v in arm.get("properties", {}).items():
            if k not in out:
                out[k] = (v, k in arm_req, f"/oneOf/{i}/properties/{esc(k)}")
            elif out[k][1] and k not in arm_req:
                out[k] = (out[k][0], False, out[k][2])
    return out


def fmt_shape(s):
    if s is None:
        return "?"
    if s[0] in ("array", "map"):
        return f"{s[0]} of {fmt_shape(s[1])}"
    return s[1] if s[0] == "ref" else s[0]


def shapes_differ(rust, sch, types, defs):
    """Whether a Rust member shape and a schema member shape state different JSON types."""
    if rust is None or sch is None:
        return False
    seen = set()
    while rust[0] == "ref" and rust[1] in types and types[rust[1]].kind == "alias" and rust[1] not in seen:
        seen.add(rust[1])
        rust = types[rust[1]].shape or rust  # a transparent newtype reads as what it wraps
    if sch[0] in ("any", "union") or rust[0] == "any":
        return False
    if rust[0] == "ref" and sch[0] == "ref":
        return rust[1] != sch[1]
    if rust[0] in ("array", "map") and sch[0] == rust[0]:
        return shapes_differ(rust[1], sch[1], types, defs)
    if sch[0] == "ref":
        target = defs.get(sch[1])
        if target is None:
            return True
        inner = schema_shape(target)
        if inner[0] in ("enum", "object", "union", "any"):
            return True  # the schema names a definition where the crate has a plain type
        return shapes_differ(rust, inner, types, defs)
    if rust[0] == "ref":
        wt = types.get(rust[1])
        if sch[0] == "object":
            return wt is not None and wt.kind not in ("object", "opaque")
        if sch[0] == "enum":
            return wt is None or wt.kind != "enum"
        return True  # a named crate type where the schema has a primitive
    return rust[0] != sch[0]


# =============================================================================================
# The comparison.
# =============================================================================================

class Report:
    def __init__(self):
        self.diffs = []  # (pointer, message)
        self.notes = []
        self.facts = 0

    def diff(self, pointer, message):
        self.diffs.append((pointer, message))

    def note(self, pointer, message):
        self.notes.append(f"{pointer}\t{message}")


def stability_word(flag):
    return "experimental" if flag else "stable"


def presence(required):
    return "required" if required else "optional"


def nullability(nullable):
    return "nullable" if nullable else "not nullable"


def compare(crate, schema):
    report = Report()
    types = build_types(crate)
    defs = schema.get("$defs", {})
    compare_definitions(types, defs, report)
    compare_capabilities(types, schema, report)
    compare_errors(crate, types, schema, report)
    compare_methods(crate, types, schema, report)
    compare_release(crate, schema, report)
    for problem in crate.problems:
        report.note("(crate)", problem)
    return report, types


def compare_definitions(types, defs, report):
    for name, wt in sorted(types.items()):
        if wt.inline:
            continue
        report.facts += 1
        ptr = f"/$defs/{esc(name)}"
        d = defs.get(name)
        if d is None:
            report.diff(ptr, f"crate type {name} ({wt.kind}, {wt.item.path}) has no definition")
            continue
        if wt.stability is not None and (wt.stability == "experimental") != experimental(d):
            report.diff(ptr + "/x-msp-stability",
                        f"{name}: {wt.stability} in crate docs, {stability_word(experimental(d))} in schema")
        elif wt.stability is None and experimental(d):
            report.note(ptr, "experimental in schema; crate docs silent")
        if wt.kind == "object":
            compare_object(wt, d, ptr, types, defs, report)
        elif wt.kind == "enum":
            compare_enum(wt, d, ptr, report)
        elif wt.kind == "union":
            compare_union(wt, d, ptr, report)
    for name, d in sorted(defs.items()):
        if name in types and not types[name].inline:
            continue
        if experimental(d):
            report.note(f"/$defs/{esc(name)}", "experimental definition not in crate")
        else:
            report.diff(f"/$defs/{esc(name)}", f"stable definition {name} has no crate type")


def compare_object(wt, d, ptr, types, defs, report):
    members = schema_members(d)
    if not members and d.get("type") != "object":
        report.diff(ptr, f"{wt.name}: object in crate, {d.get('type') or 'no object'} in schema")
        return
    for wire, m in wt.members.items():
        report.facts += 1
        if wire not in members:
            said = f", {m.stability} in docs" if m.stability else ""
            report.diff(f"{ptr}/properties/{esc(wire)}",
                        f"{wt.name}.{wire}: in crate ({m.origin}{said}), not in schema")
            continue
        node, required, sub = members[wire]
        p = ptr + sub
        if m.required is not None and m.required != required:
            report.diff(p, f"{wt.name}.{wire}: {presence(m.required)} in crate ({m.origin}), "
                           f"{presence(required)} in schema")
        nullable = schema_nullable(node)
        if m.nullable is not None and m.nullable != nullable:
            where = "/anyOf" if ("anyOf" in node or "$ref" in node) else "/type"
            report.diff(p + where, f"{wt.name}.{wire}: {nullability(m.nullable)} in crate ({m.origin}), "
                                   f"{nullability(nullable)} in schema")
        sshape = schema_shape(node)
        if shapes_differ(m.shape, sshape, types, defs):
            where = "/$ref" if "$ref" in node else "/type" if "type" in node else ""
            report.diff(p + where, f"{wt.name}.{wire}: {fmt_shape(m.shape)} in crate ({m.origin}), "
                                   f"{fmt_shape(sshape)} in schema")
        in_schema = experimental(node) or experimental(d)
        claimed = m.stability == "experimental" and not in_schema
        if claimed or (m.stability == "stable" and experimental(node)):
            report.diff(p + "/x-msp-stability", f"{wt.name}.{wire}: {m.stability} in crate docs, "
                                                f"{stability_word(in_schema)} in schema")
        elif m.stability is None and experimental(node):
            report.note(p, "experimental in schema; crate docs silent")
    for wire, (node, required, sub) in members.items():
        if wire in wt.members:
            continue
        if wt.partial:
            report.note(ptr + sub, f"member of a hand-serialized part of {wt.name}; not checked")
        elif experimental(node) or experimental(d):
            report.note(ptr + sub, "experimental member not in crate")
        else:
            report.diff(ptr + sub, f"{wt.name}.{wire}: {presence(required)} stable member not in crate")


def compare_enum(wt, d, ptr, report):
    values = d.get("enum")
    if values is None:
        shape = "a union" if "oneOf" in d else "a free string" if d.get("type") == "string" else "no enum"
        report.diff(ptr, f"{wt.name}: enum of {len(wt.values)} values in crate, {shape} in schema")
        return
    for v in wt.values:
        report.facts += 1
        if v not in values:
            said = f" ({wt.value_stability[v]} in docs)" if wt.value_stability.get(v) else ""
            report.diff(ptr + "/enum", f"{wt.name}: value `{v}` in crate{said}, not in schema")
    for i, v in enumerate(values):
        if v not in wt.values:
            report.diff(f"{ptr}/enum/{i}", f"{wt.name}: value `{v}` not in crate")
    report.facts += 1
    schema_open = d.get("x-msp-openness") == "open"
    if wt.openness == "lossy":
        report.diff(ptr + "/x-msp-openness", f"{wt.name}: lossy in crate ({wt.lossy_how}), "
                                             f"{'open' if schema_open else 'closed'} in schema")
    elif (wt.openness == "open") != schema_open:
        report.diff(ptr + "/x-msp-openness",
                    f"{wt.name}: {wt.openness} in crate, {'open' if schema_open else 'closed'} in schema")


def compare_union(wt, d, ptr, report):
    if wt.tag is None:
        if "anyOf" not in d and "oneOf" not in d and not isinstance(d.get("type"), list):
            report.diff(ptr, f"{wt.name}: untagged union in crate, no anyOf in schema")
        return
    arms = d.get("oneOf")
    if arms is None:
        report.diff(ptr, f"{wt.name}: union tagged by `{wt.tag}` in crate, no oneOf in schema")
        return
    tags = [a.get("properties", {}).get(wt.tag, {}).get("const") for a in arms if isinstance(a, dict)]
    for v in wt.values:
        report.facts += 1
        if v not in tags:
            report.diff(ptr + "/oneOf", f"{wt.name}: arm `{v}` in crate, not in schema")
    for i, v in enumerate(tags):
        if v is not None and v not in wt.values:
            report.diff(f"{ptr}/oneOf/{i}", f"{wt.name}: arm `{v}` not in crate")
    schema_open = d.get("x-msp-openness") == "open"
    if (wt.openness == "open") != schema_open:
        report.diff(ptr + "/x-msp-openness",
                    f"{wt.name}: {wt.openness} in crate, {'open' if schema_open else 'closed'} in schema")


def compare_capabilities(types, schema, report):
    cap = types.get("CapabilityName")
    if cap is None:
        return
    grantable = schema.get("capabilities", {}).get("grantable", [])
    for v in cap.values:
        report.facts += 1
        if v not in grantable:
            report.diff("/capabilities/grantable", f"capability `{v}` in crate, not grantable in schema")
    for i, v in enumerate(grantable):
        if v not in cap.values:
            report.diff(f"/capabilities/grantable/{i}", f"grantable `{v}` is no crate capability")


def fmt_retry(value):
    return "absent" if value is None else str(bool(value)).lower()


def compare_errors(crate, types, schema, report):
    rows, problems = read_errors(crate, types)
    for p in problems:
        report.note("(crate)", p)
    if not rows:
        report.note("(crate)", "no error registry found")
        return
    by_code = {e.get("code"): (i, e) for i, e in enumerate(schema.get("errors", []))}
    for r in rows:
        report.facts += 1
        if r.code not in by_code:
            report.diff("/errors", f"error {r.code} {r.kind} (retryable {fmt_retry(r.retryable)}, "
                                   f"{stability_word(r.experimental)}) not in schema")
            continue
        i, e = by_code[r.code]
        p = f"/errors/{i}"
        if e.get("kind") != r.kind:
            report.diff(p + "/kind", f"error {r.code}: kind {r.kind} in crate, {e.get('kind')} in schema")
        if sorted(e.get("overrideKinds", [])) != sorted(r.overrides):
            report.diff(p + "/overrideKinds", f"error {r.code}: override kinds {sorted(r.overrides)} "
                                              f"in crate, {sorted(e.get('overrideKinds', []))} in schema")
        if ("retryable" in e) != (r.retryable is not None) or e.get("retryable") != r.retryable:
            report.diff(p + "/retryable", f"error {r.code}: retryable {fmt_retry(r.retryable)} in crate, "
                                          f"{fmt_retry(e.get('retryable'))} in schema")
        if r.experimental != experimental(e):
            report.diff(p + "/x-msp-stability", f"error {r.code}: {stability_word(r.experimental)} in crate, "
                                                f"{stability_word(experimental(e))} in schema")
    codes = {r.code for r in rows}
    for code, (i, e) in sorted(by_code.items(), key=lambda kv: kv[1][0]):
        if code not in codes:
            report.diff(f"/errors/{i}", f"error {code} {e.get('kind')} not in the crate's registry")


def compare_methods(crate, types, schema, report):
    tables = {k: schema.get(k, {}) for k in ("methods", "notifications", "requests")}

    def table_of(method):
        return next((k for k in tables if method in tables[k]), None)

    def declared(table, method, part):
        return tables[table][method].get(part, {}).get("$ref", "").split("/")[-1] or None

    bound, named = doc_methods(types, tables)
    for method, part, tname in bound:
        report.facts += 1
        table = table_of(method)
        if table is None:
            report.diff(f"/methods/{esc(method)}",
                        f"{method}: crate docs give its {part} as {tname}; in no schema table")
        elif not (part == "result" and table == "notifications") and declared(table, method, part) != tname:
            report.diff(f"/{table}/{esc(method)}/{part}",
                        f"{method}: {part} {tname} in crate docs, {declared(table, method, part)} in schema")
    for method, results in sorted(crate.calls.items()):
        report.facts += 1
        table = table_of(method)
        if table is None:
            report.diff(f"/methods/{esc(method)}", f"{method}: called by the SDK; in no schema table")
            continue
        want = declared(table, method, "result")
        for result in sorted(results):
            if result != want:
                report.diff(f"/{table}/{esc(method)}/result",
                            f"{method}: the SDK reads its result as {result}, {want} in schema")
    for method, path in sorted(named.items()):
        if table_of(method) is None:
            report.diff(f"/methods/{esc(method)}",
                        f"{method}: named in crate docs ({path}); in no schema table")


def compare_release(crate, schema, report):
    fingerprint = crate.consts.get("GENERATED_FINGERPRINT")
    if crate.version:
        report.facts += 1
        if schema.get("x-msp-version") != crate.version:
            report.diff("/x-msp-version",
                        f"crate release {crate.version}, schema {schema.get('x-msp-version')}")
    if isinstance(fingerprint, str):
        report.facts += 1
        served = schema.get("x-msp-served-schema", {}).get("fingerprints", {})
        if served.get("stable") != fingerprint:
            report.diff("/x-msp-served-schema/fingerprints/stable",
                        f"crate fingerprint {fingerprint}, schema {served.get('stable')}")
    releases = schema.get("x-msp-host-releases")
    if isinstance(releases, list) and crate.version:
        report.facts += 1
        hits = [i for i, r in enumerate(releases)
                if isinstance(r, dict) and r.get("release") == crate.version]
        if not hits:
            report.diff("/x-msp-host-releases", f"release {crate.version} not listed")
        elif isinstance(fingerprint, str):
            listed = releases[hits[0]].get("fingerprints", {}).get("stable")
            if listed != fingerprint:
                report.diff(f"/x-msp-host-releases/{hits[0]}/fingerprints/stable",
                            f"release {crate.version}: crate fingerprint {fingerprint}, listed {listed}")


# =============================================================================================
# Allow-list and report.
# =============================================================================================

def read_allow(path):
    allowed = {}
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            pointer, _, reason = line.partition("\t")
            if not reason.strip():
                raise ValueError(f"{path}:{n}: an entry is `<JSON pointer>\\t<reason>`")
            allowed[pointer.strip()] = reason.strip()
    return allowed


def main(argv):
    args, allow_path, show_notes, quiet = [], None, False, False
    it = iter(argv)
    for a in it:
        if a == "--allow":
            allow_path = next(it, None)
        elif a == "--notes":
            show_notes = True
        elif a == "--quiet":
            quiet = True
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            args.append(a)
    if len(args) != 2 or (allow_path is None and "--allow" in argv):
        print(__doc__, file=sys.stderr)
        return 2
    crate_dir, schema_path = args
    if not os.path.isdir(os.path.join(crate_dir, "src", "msp")):
        print(f"{crate_dir}: no src/msp directory (not an unpacked muse-code-sdk crate)", file=sys.stderr)
        return 2
    try:
        with open(schema_path, encoding="utf-8") as fh:
            schema = json.load(fh)
        allowed = read_allow(allow_path) if allow_path else {}
    except (OSError, ValueError) as exc:
        print(exc, file=sys.stderr)
        return 2
    report, types = compare(read_crate(crate_dir), schema)
    unexplained, used = 0, set()
    for pointer, message in report.diffs:
        reason = allowed.get(pointer)
        if reason is None:
            unexplained += 1
            print(f"{pointer}\t{message}")
        else:
            used.add(pointer)
            if not quiet:
                print(f"{pointer}\t{message}\t(allowed: {reason})")
    for pointer in allowed:
        if pointer not in used:
            print(f"note: allow-list entry {pointer} explains no difference")
    if show_notes:
        for note in report.notes:
            print(f"note: {note}")
    print(f"sdk-rust-facts: {len(types)} crate wire types, {report.facts} facts compared, "
          f"{len(report.notes)} notes")
    print(f"{len(report.diffs)} differences")
    print(f"{unexplained} unexplained differences")
    return 0 if unexplained == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
