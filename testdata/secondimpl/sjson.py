"""Strict JSON (I-JSON, RFC 7493) reader and RFC 8785 (JCS) writer, standard library only.

The reader keeps each number's spelling (class Num), refuses duplicate member
names, lone surrogate escapes and trailing data, and records which member
names were written with escapes (Obj.escaped). The writer emits the JCS form of
the parse tree, never of a re-encoding of decoded values.
"""

import math
import re
from decimal import Decimal


class JSONError(ValueError):
    """Text that is not one valid I-JSON value."""


class Num:
    """A JSON number as written; .value is the IEEE-754 double it denotes."""

    __slots__ = ("raw", "value")

    def __init__(self, raw):
        self.raw = raw
        self.value = float(raw)

    def __repr__(self):
        return "Num(%s)" % self.raw


class Obj(dict):
    """A JSON object; .escaped holds the names written with a backslash escape."""

    def __init__(self):
        super().__init__()
        self.escaped = set()


_NUM = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_WS = " \t\r\n"
_ESC = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class _Parser:
    def __init__(self, text):
        self.s = text
        self.i = 0

    def err(self, msg):
        raise JSONError("%s at character %d" % (msg, self.i))

    def ws(self):
        s, i = self.s, self.i
        while i < len(s) and s[i] in _WS:
            i += 1
        self.i = i

    def value(self, depth):
        self.ws()
        if self.i >= len(self.s):
            self.err("unexpected end of input")
        c = self.s[self.i]
        if c == "{":
            return self.obj(depth + 1)
        if c == "[":
            return self.arr(depth + 1)
        if c == '"':
            return self.string()[0]
        for lit, v in (("true", True), ("false", False), ("null", None)):
            if self.s.startswith(lit, self.i):
                self.i += len(lit)
                return v
        m = _NUM.match(self.s, self.i)
        if not m:
            self.err("unexpected character %r" % c)
        self.i = m.end()
        n = Num(m.group())
        if math.isinf(n.value):
            self.err("number %s is not a finite double" % m.group())
        return n

    def obj(self, depth):
        if depth > 64:
            self.err("arrays and objects nested deeper than 64 levels")
        self.i += 1
        o = Obj()
        self.ws()
        if self.s.startswith("}", self.i):
            self.i += 1
            return o
        while True:
            self.ws()
            if not self.s.startswith('"', self.i):
                self.err("expected a member name")
            k, escaped = self.string()
            if k in o:
                self.err("duplicate member name %r" % k)
            if escaped:
                o.escaped.add(k)
            self.ws()
            if not self.s.startswith(":", self.i):
                self.err("expected ':'")
            self.i += 1
            o[k] = self.value(depth)
            self.ws()
            if self.s.startswith(",", self.i):
                self.i += 1
                continue
            if self.s.startswith("}", self.i):
                self.i += 1
                return o
            self.err("expected ',' or '}'")

    def arr(self, depth):
        if depth > 64:
            self.err("arrays and objects nested deeper than 64 levels")
        self.i += 1
        a = []
        self.ws()
        if self.s.startswith("]", self.i):
            self.i += 1
            return a
        while True:
            a.append(self.value(depth))
            self.ws()
            if self.s.startswith(",", self.i):
                self.i += 1
                continue
            if self.s.startswith("]", self.i):
                self.i += 1
                return a
            self.err("expected ',' or ']'")

    def string(self):
        s = self.s
        i = self.i + 1
        out = []
        escaped = False
        while True:
            if i >= len(s):
                self.i = i
                self.err("unterminated string")
            c = s[i]
            if c == '"':
                self.i = i + 1
                return "".join(out), escaped
            if ord(c) < 0x20:
                self.i = i
                self.err("control character in string")
            if c != "\\":
                out.append(c)
                i += 1
                continue
            escaped = True
            e = s[i + 1:i + 2]
            if e in _ESC:
                out.append(_ESC[e])
                i += 2
                continue
            if e != "u":
                self.i = i
                self.err("invalid escape")
            cp = self._hex4(i + 2)
            i += 6
            if 0xD800 <= cp < 0xDC00:
                if s[i:i + 2] != "\\u":
                    self.i = i
                    self.err("unpaired surrogate escape")
                lo = self._hex4(i + 2)
                if not 0xDC00 <= lo < 0xE000:
                    self.i = i
                    self.err("unpaired surrogate escape")
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00)
                i += 6
            elif 0xDC00 <= cp < 0xE000:
                self.i = i
                self.err("unpaired surrogate escape")
            out.append(chr(cp))

    def _hex4(self, j):
        h = self.s[j:j + 4]
        if len(h) != 4 or not all(ch in "0123456789abcdefABCDEF" for ch in h):
            self.i = j
            self.err("invalid \\u escape")
        return int(h, 16)


def loads(text):
    """Parses one I-JSON value; anything but whitespace after it is an error."""
    p = _Parser(text)
    v = p.value(0)
    p.ws()
    if p.i != len(text):
        p.err("data after the JSON value")
    return v


# ------------------------------------------------------------------ RFC 8785

def es_number(x: float) -> str:
    """ECMAScript Number.prototype.toString of a finite double (RFC 8785 3.2.2.3)."""
    if x != x or x in (float("inf"), float("-inf")):
        raise ValueError("not a finite number")
    if x == 0:
        return "0"
    if x < 0:
        return "-" + es_number(-x)
    sign, digits, exp = Decimal(repr(x)).as_tuple()
    ds = "".join(map(str, digits)).rstrip("0")
    exp += len(digits) - len(ds)  # value = ds * 10^exp
    k = len(ds)
    n = k + exp  # value = 0.ds * 10^n
    if k <= n <= 21:
        return ds + "0" * (n - k)
    if 0 < n <= 21:
        return ds[:n] + "." + ds[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + ds
    e = n - 1
    mant = ds[0] + ("." + ds[1:] if k > 1 else "")
    return mant + "e" + ("+" if e > 0 else "-") + str(abs(e))


def _jcs_string(s: str) -> str:
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif o < 0x20:
            out.append({8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r"}.get(o, "\\u%04x" % o))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _utf16_key(k):
    return k.encode("utf-16-be")


def jcs_text(v) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, Num):
        return es_number(v.value)
    if isinstance(v, (int, float)):
        return es_number(float(v))
    if isinstance(v, str):
        return _jcs_string(v)
    if isinstance(v, list):
        return "[" + ",".join(jcs_text(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ",".join(_jcs_string(k) + ":" + jcs_text(v[k]) for k in sorted(v, key=_utf16_key)) + "}"
    raise TypeError("not a JSON value: %r" % (v,))


def jcs(v) -> bytes:
    """RFC 8785 bytes of a parse tree."""
    return jcs_text(v).encode("utf-8")


def numbers_canonical(v, path):
    """Yields (path, raw, canonical) for each number in v not written in its RFC 8785 form."""
    if isinstance(v, Num):
        c = es_number(v.value)
        if c != v.raw:
            yield path, v.raw, c
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from numbers_canonical(x, "%s[%d]" % (path, i))
    elif isinstance(v, dict):
        for k, x in v.items():
            yield from numbers_canonical(x, "%s.%s" % (path, k))
