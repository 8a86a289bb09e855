#!/usr/bin/env python3
"""svcverify.py: an independent second verifier of svc v1 documents.

Written from docs/FORMATS.md, docs/VERIFYING.md and docs/API.md alone
(trust roots and log receipts from docs/KEYS.md and docs/TRANSPARENCY.md,
in trust.py), in
Python 3 with the standard library only (RFC 3161 tokens included: CMS
signature, ESS, TSA certificate rules and chain in tsa.py; --tsa-openssl
also runs openssl ts -verify on each token, as docs/VERIFYING.md does). See
docs/INTEROP.md for what it covers.

usage:
  svcverify.py verify VPEC --trust-root ROOT [--trust-root-update NEW]... [--profile P]... [--tsa-openssl] [--json]
      [--receipt R [--require-log] [--witness-policy W] [--log-checkpoint C --consistency-proof P]]
  svcverify.py verify-profile PROFILE --trust-root BUNDLE [--json]
  svcverify.py hash [--algorithm sha256|poseidon2] FILE
  svcverify.py worked-examples FORMATS.md [--vectors DIR]
  svcverify.py timestamp TOKEN (--data F | --digest F) --root PEM... [--untrusted PEM...]
  svcverify.py jcs-batch < LINES     (base64 JSON texts in, base64 RFC 8785 out)
  svcverify.py poseidon2-batch < LINES (base64 payloads in, poseidon2: commitments out)
  svcverify.py verify-batch < JOBS   (one JSON object a line: {"file", "trust_root",
      "profiles", "tsa_openssl", "kind"}; writes one JSON report a line)

exit: 0 VALID, 1 INVALID, 2 usage or UNREADABLE, 3 UNVERIFIED (as svc-verify).
"""

import base64
import binascii
import datetime
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # leave no __pycache__ in the repository
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import crypto_prims  # noqa: E402
import der  # noqa: E402
import sjson  # noqa: E402
import trust as trustroot  # noqa: E402
import tsa  # noqa: E402
from sjson import Num, Obj  # noqa: E402

MAX_DOC = 268435456
MAX_INT = 2**53 - 1
CHECKS = ["schema", "signature", "chain", "merkle_root", "zk_proofs", "evidence", "timestamp", "time",
          "gaps", "summary", "reviews", "profile", "disclosures", "transparency"]
LEVELS = ["mathematical", "verifiable_inference", "operator_bound", "execution", "witnessed", "attestation"]
RESULTS = ["pass", "fail", "error", "skipped", "degraded", "override", "not_applicable"]
VISIBILITIES = ["opaque", "selective", "transparent"]
SEVERITIES = ["Critical", "High", "Medium", "Low", "Informational"]
FIXED_SEVERITY = {"system_unavailable": "High", "model_profile_missing": "Medium", "circuit_missing": "Medium",
                  "sequence_missing": "High", "chain_break": "Critical", "empty_run": "High"}
GPU_CLASSES = ["cpu", "a10g", "a100", "h100"]
OPERATOR_CLASSES = ["Linear", "LayerNorm", "Softmax", "GELU", "Dropout", "Other"]
TRACE_MODES = ["full", "production", "residual"]
SKEW = 300 * 10**9  # nanoseconds
TS_WINDOW = 900 * 10**9
SPKI_PREFIX = bytes.fromhex("302a300506032b6570032100")

ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
SHA_RE = re.compile(r"^sha256:[0-9a-f]{64}$")
P2_RE = re.compile(r"^poseidon2:[0-9a-f]{64}$")
KEYID_RE = re.compile(r"^[0-9a-f]{16}$")
TIME_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?Z$")
INT_RE = re.compile(r"^-?(0|[1-9][0-9]*)$")
PROFILE_ID_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}/[a-z0-9][a-z0-9._-]{0,63}-class/"
                           r"v(0|[1-9][0-9]{0,5})\.(0|[1-9][0-9]{0,5})\.(0|[1-9][0-9]{0,5})$")
B64URL_RE = re.compile(r"^[A-Za-z0-9_-]*$")
BIDI = {0x061C, 0x200E, 0x200F} | set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A))


class SchemaError(Exception):
    pass


class Fail(Exception):
    """A failed check: code and message."""

    def __init__(self, code, msg, missing_trust=False):
        super().__init__(msg)
        self.code = code
        self.msg = msg
        self.missing_trust = missing_trust


# ------------------------------------------------------------------ helpers

def sha256_commit(b: bytes) -> str:
    return "sha256:" + hashlib.sha256(b).hexdigest()


def b64_canonical(s, what):
    """Decodes RFC 4648 section 4 base64 that is the one canonical spelling of its bytes."""
    if not isinstance(s, str) or not re.fullmatch(r"[A-Za-z0-9+/]*={0,2}", s) or len(s) % 4:
        raise SchemaError("%s: not standard padded base64 (RFC 4648 section 4)" % what)
    try:
        b = base64.b64decode(s, validate=True)
    except binascii.Error:
        raise SchemaError("%s: not standard padded base64" % what) from None
    if base64.b64encode(b).decode() != s:
        raise SchemaError("%s: base64 is not canonical (non-zero pad bits)" % what)
    return b


def parse_time(s, what):
    if not isinstance(s, str):
        raise SchemaError("%s: want an RFC 3339 time string" % what)
    m = TIME_RE.match(s)
    if not m:
        raise SchemaError("%s: %r is not an RFC 3339 UTC time ending in Z" % (what, s))
    try:
        t = datetime.datetime(*map(int, m.groups()[:6]), tzinfo=datetime.timezone.utc)
    except ValueError:
        raise SchemaError("%s: %r is not a valid date and time" % (what, s)) from None
    return int(t.timestamp()) * NS + frac_ns(m.group(7))


NS = 10**9


def frac_ns(frac):
    """Nanoseconds of a fraction of a second ".ddd…" (digits after the
    ninth dropped, as svc-verify drops them); times are integer
    nanoseconds, never floats (a double resolves about 0.24 us today)."""
    return int((frac or ".")[1:].ljust(9, "0")[:9])


def key_id(spki: bytes) -> str:
    return hashlib.sha256(spki).hexdigest()[:16]


def is_name(s):
    return isinstance(s, str) and not any(
        ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or ord(c) in BIDI for c in s)


def esc(s):
    """Escapes what a document says before it is printed."""
    return "".join(c if (0x20 <= ord(c) < 0x7F) else "\\u%04x" % ord(c) if ord(c) < 0x10000
                   else "\\U%08x" % ord(c) for c in str(s))


def commitment_ok(s):
    if not isinstance(s, str):
        return False
    if SHA_RE.match(s):
        return True
    return bool(P2_RE.match(s)) and int(s[10:], 16) < crypto_prims.BN254_R


# ------------------------------------------------------------------ trust bundle

def log_key_block(body):
    """A TRANSPARENCY LOG KEY block (FORMATS.md, "Trust bundle"): exactly
    one header, Note-Verifier, then the DER SubjectPublicKeyInfo of an
    Ed25519 key, which the note verifier key must name. Returns
    (spki, note verifier string)."""
    head, sep, b64body = body.replace("\r\n", "\n").partition("\n\n")
    headers = [h for h in head.split("\n") if h]
    if not sep or len(headers) != 1 or not headers[0].startswith("Note-Verifier: "):
        raise ValueError("trust bundle: a TRANSPARENCY LOG KEY block needs exactly one Note-Verifier header")
    vkey = headers[0][len("Note-Verifier: "):].strip()
    spki = base64.b64decode("".join(b64body.split()))
    if len(spki) != 44 or not spki.startswith(SPKI_PREFIX):
        raise ValueError("trust bundle: a TRANSPARENCY LOG KEY that is not Ed25519")
    try:
        _, _, alg, key = trustroot.parse_vkey(vkey)
    except ValueError as e:
        raise ValueError("trust bundle: TRANSPARENCY LOG KEY: %s" % e) from None
    if alg != 1 or key != spki[12:]:
        raise ValueError("trust bundle: the Note-Verifier of a TRANSPARENCY LOG KEY names another key")
    return spki, vkey


class Trust:
    def __init__(self, path):
        self.path = path
        self.keys = {}
        self.certs = []
        self.cert_ders = []
        raw = open(path, "rb").read()
        if raw.lstrip()[:1] == b"{":
            # A svc.trust-root/v1 document (docs/KEYS.md).
            self.root = trustroot.Root(raw)
            self._from_root()
            return
        text = raw.decode("utf-8")
        logs = []
        for m in re.finditer(r"-----BEGIN ([A-Z0-9 ]+)-----\r?\n(.*?)-----END \1-----", text, re.S):
            kind = m.group(1)
            if kind == "TRANSPARENCY LOG KEY":
                logs.append(log_key_block(m.group(2)))
                continue
            body = base64.b64decode("".join(m.group(2).split()))
            if kind == "PUBLIC KEY":
                if len(body) != 44 or not body.startswith(SPKI_PREFIX):
                    raise ValueError("trust bundle: a PUBLIC KEY that is not Ed25519")
                self.keys[key_id(body)] = body[12:]
            elif kind == "CERTIFICATE":
                try:
                    tsa.Cert(body)
                except (der.DERError, IndexError, ValueError) as e:
                    raise ValueError("trust bundle: a CERTIFICATE that does not parse: %s" % e) from None
                self.certs.append(m.group(0))
                self.cert_ders.append(body)
            else:
                raise ValueError("trust bundle: block type %s is not allowed" % kind)
        if not self.keys:
            raise ValueError("trust bundle holds no PUBLIC KEY")
        self.root = trustroot.Root.from_bundle(self.keys, self.cert_ders, logs)

    def _from_root(self):
        self.keys, self.certs, self.cert_ders = {}, [], []
        for e in self.root.entries:
            if e.purpose in ("vpec-signing", "profile-signing", "circuit-signing") and e.public_key:
                self.keys[e.key_id] = e.public_key
            elif e.purpose == "tsa-root" and e.cert and e.cert not in self.cert_ders:
                self.cert_ders.append(e.cert)
                b = base64.b64encode(e.cert).decode()
                self.certs.append("-----BEGIN CERTIFICATE-----\n%s\n-----END CERTIFICATE-----" % "\n".join(
                    b[i:i + 64] for i in range(0, len(b), 64)))
        if not self.keys:
            raise ValueError("trust root holds no signing key")

    def update(self, paths):
        """Moves to each newer root in turn (docs/KEYS.md, update
        chaining); raises trustroot.Refused with its code."""
        if not paths:
            return
        for p in paths:
            if self.root.legacy():
                raise trustroot.Refused("no-root-keys", "a PEM trust bundle cannot be updated")
            self.root = trustroot.verify_update(self.root, trustroot.Root(open(p, "rb").read()))
        self._from_root()


# ------------------------------------------------------------------ reading the document

def read_input(path):
    """The bytes of a file, read no further than MAX_DOC + 1: a larger
    document is refused before it is read whole (FORMATS.md, JSON
    conventions), and its verdict is UNREADABLE — TOO LARGE all the same."""
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        if st.st_size > MAX_DOC and os.path.isfile(path):
            return TooLarge(st.st_size)
        data = f.read(MAX_DOC + 1)
    return TooLarge(-1) if len(data) > MAX_DOC else data


class TooLarge(bytes):
    """Stands for a document above MAX_DOC bytes that was not read."""

    def __new__(cls, size):
        o = super().__new__(cls, b"")
        o.size = size
        return o


def read_document(data: bytes):
    """Returns the parse tree, or raises Fail with NOT JSON / TOO LARGE / SCHEMA ERROR."""
    if isinstance(data, TooLarge) or len(data) > MAX_DOC:
        raise Fail("TOO LARGE", "the document is larger than 256 MiB")
    if not data.strip(b" \t\r\n"):
        raise Fail("NOT JSON", "the document is empty")
    if data.startswith(b"\xef\xbb\xbf"):
        raise Fail("NOT JSON", "the document starts with a UTF-8 byte order mark")
    for i, c in enumerate(data):
        if c < 0x20 and c not in (9, 10, 13):
            raise Fail("NOT JSON", "binary data (byte 0x%02x) at byte %d" % (c, i))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Fail("NOT JSON", "not UTF-8 at byte %d" % e.start) from None
    try:
        return sjson.loads(text)
    except sjson.JSONError as e:
        raise Fail("SCHEMA ERROR", "not valid I-JSON: %s" % e) from None


# ------------------------------------------------------------------ schema

def want(cond, msg):
    if not cond:
        raise SchemaError(msg)


def want_int(v, path, lo, hi):
    want(isinstance(v, Num), "%s: want an integer" % path)
    want(INT_RE.match(v.raw) and v.raw != "-0", "%s: %s is not written as plain integer digits" % (path, v.raw))
    n = int(v.raw)
    want(abs(n) <= MAX_INT and lo <= n <= hi, "%s: %d is out of range [%d, %d]" % (path, n, lo, hi))
    return n


def want_number(v, path, lo, hi):
    want(isinstance(v, Num), "%s: want a number" % path)
    c = sjson.es_number(v.value)
    want(c == v.raw, "%s: the number %s is not in its canonical form %s (RFC 8785)" % (path, v.raw, c))
    want(lo <= v.value <= hi, "%s: %s is out of range" % (path, v.raw))
    return v.value


def want_str(v, path):
    want(v is not None, "%s: is null, want a string" % path)
    want(isinstance(v, str), "%s: want a string" % path)
    return v


def want_members(o, path, required, optional, nullable=()):
    want(isinstance(o, dict), "%s: want an object" % path)
    for k in o:
        want(k in required or k in optional, "%s: unknown member %s" % (path, k))
    for k in required:
        want(k in o, "%s: missing required member %s" % (path, k))
        if o[k] is None and k not in nullable:
            raise SchemaError("%s.%s: is null" % (path, k))
    for k in optional:
        if k in o:
            v = o[k]
            want(not (v is None or v == "" or v == {} or v == [] or v is False or
                      (isinstance(v, Num) and v.value == 0)),
                 "%s.%s: empty; omit the member instead" % (path, k))


def want_name(v, path, lo=1, hi=256):
    want_str(v, path)
    n = len(v.encode("utf-8"))
    want(lo <= n <= hi, "%s: %d bytes, want %d-%d" % (path, n, lo, hi))
    want(is_name(v), "%s: holds a control or bidirectional character" % path)


def want_id(v, path, prefix=""):
    want_str(v, path)
    # A prefixed id is the prefix and an id, 128 bytes at most in all
    # (FORMATS.md, "id").
    want(v.startswith(prefix) and ID_RE.match(v[len(prefix):]) and len(v) <= 128,
         "%s: %r is not %sid (128 bytes at most in all)" % (path, v, prefix + " + " if prefix else "an "))


def want_sha(v, path):
    want_str(v, path)
    want(SHA_RE.match(v), "%s: not a SHA-256 hash (sha256: and 64 lowercase hex digits)" % path)


def want_commitment(v, path):
    want_str(v, path)
    want(commitment_ok(v), "%s: malformed commitment hash" % path)


def want_sig(v, path):
    want_str(v, path)
    want(v.startswith("Ed25519:") and len(v) == 96, "%s: not an Ed25519: signature string" % path)
    b = b64_canonical(v[8:], path)
    want(len(b) == 64, "%s: not 64 signature bytes" % path)


def want_enum(v, path, values):
    want_str(v, path)
    want(v in values, "%s: %r is not one of %s" % (path, v, ", ".join(values)))


def no_escaped_names(o, path):
    if o.escaped if isinstance(o, Obj) else False:
        raise SchemaError("%s: %s is a member name written with escapes; write it plainly" % (path, sorted(o.escaped)[0]))


def numbers_in(v, path):
    for p, raw, c in sjson.numbers_canonical(v, path):
        raise SchemaError("%s: the number %s is not in its canonical form %s (RFC 8785)" % (p, raw, c))


TOP = ["schema", "vpec_id", "run_id", "workflow_id", "org_id", "issued_at", "environment", "api_key_id",
       "proof_level_floor", "proof_level_breakdown", "provable_surface", "provable_surface_breakdown",
       "total_checks_run", "checks_passed", "checks_failed", "gaps", "chain_intact", "is_clean", "merkle_root",
       "records", "signing_key_id", "signature", "timestamp_rfc3161"]
TOP_OPT = ["opened_at"]
REC_REQ = ["record_id", "sequence", "check", "manifest_id", "check_result", "proof_level", "commitment_algorithm",
           "commitment_hash", "visibility", "recorded_at", "chain_hash"]
GAP_REQ = ["gap_id", "gap_type", "severity", "check", "sequence", "timestamp"]
REC_OPT = ["output_commitment", "onnx_model_hash", "stage_type", "stage_part", "details", "review", "check_session",
           "bounded_inference", "disclosed_input", "disclosed_output", "field_digests", "disclosures", "manifest", "zk_proof"]


def count_values(v):
    if isinstance(v, list):
        return 1 + sum(count_values(x) for x in v)
    if isinstance(v, dict):
        return 1 + sum(count_values(x) for x in v.values())
    return 1


def shape_scan(d):
    """FORMATS.md's pre-parse shape check: shapes that cannot be a v1 VPEC."""
    want(isinstance(d, dict), "not a VPEC: the top level is not a JSON object")
    for k in d:
        want(k in TOP or k in TOP_OPT, "not a VPEC: unknown member %s" % k)
    for name, req, opt in (("records", REC_REQ, REC_OPT), ("gaps", GAP_REQ, ["sequence_end"])):
        if name not in d:
            continue
        want(isinstance(d[name], list), "not a VPEC: %s is not an array" % name)
        for i, x in enumerate(d[name]):
            p = "%s[%d]" % (name, i)
            want(isinstance(x, dict), "not a VPEC: %s is not an object" % p)
            for k in x:
                want(k in req or k in opt, "not a VPEC: %s has unknown member %s" % (p, k))
            want(len(x) >= len(req), "not a VPEC: %s has fewer members than its required ones" % p)
            if name != "records":
                continue
            for k, n in (("review", 7), ("check_session", 3), ("bounded_inference", 6), ("details", 0)):
                if k in x:
                    want(isinstance(x[k], dict), "not a VPEC: %s.%s is not an object" % (p, k))
                    want(len(x[k]) >= n, "not a VPEC: %s.%s has fewer members than its required ones" % (p, k))
            if "details" in x:
                want(count_values(x["details"]) <= 8192, "not a VPEC: %s.details holds more than 8192 values" % p)
    b = d.get("proof_level_breakdown")
    if isinstance(b, dict):
        want(len(b) <= len(LEVELS), "not a VPEC: proof_level_breakdown has more members than proof levels")


def schema_vpec(d):
    want(isinstance(d, dict), "the document is not a JSON object")
    no_escaped_names(d, "VPEC")
    want_members(d, "VPEC", TOP, TOP_OPT)
    want(d["schema"] == "svc.vpec/v1", "schema: %r is not svc.vpec/v1" % (d["schema"],))
    want_id(d["vpec_id"], "vpec_id", "vpec_")
    want_id(d["run_id"], "run_id", "run_")
    want_id(d["workflow_id"], "workflow_id")
    want_id(d["org_id"], "org_id")
    parse_time(d["issued_at"], "issued_at")
    if "opened_at" in d:
        parse_time(d["opened_at"], "opened_at")
    want_enum(d["environment"], "environment", ["sandbox", "production"])
    want_id(d["api_key_id"], "api_key_id")
    want(d["api_key_id"].startswith(("pk_sb_", "pk_live_")), "api_key_id: starts neither pk_sb_ nor pk_live_")
    want_enum(d["proof_level_floor"], "proof_level_floor", LEVELS)
    want(isinstance(d["proof_level_breakdown"], dict), "proof_level_breakdown: want an object")
    for k, v in d["proof_level_breakdown"].items():
        want_enum(k, "proof_level_breakdown", LEVELS)
        want_int(v, "proof_level_breakdown." + k, 0, MAX_INT)
    want_number(d["provable_surface"], "provable_surface", 0, 1)
    want(isinstance(d["provable_surface_breakdown"], dict), "provable_surface_breakdown: want an object")
    for k, v in d["provable_surface_breakdown"].items():
        want_number(v, "provable_surface_breakdown." + k, 0, 1)
    for k in ("total_checks_run", "checks_passed", "checks_failed"):
        want_int(d[k], k, 0, MAX_INT)
    want(isinstance(d["gaps"], list), "gaps: want an array (use [] when empty)")
    want(isinstance(d["records"], list), "records: want an array")
    for k in ("chain_intact", "is_clean"):
        want(isinstance(d[k], bool), "%s: want true or false" % k)
    want_sha(d["merkle_root"], "merkle_root")
    want_str(d["signing_key_id"], "signing_key_id")
    want(KEYID_RE.match(d["signing_key_id"]), "signing_key_id: want 16 lowercase hex digits")
    want_sig(d["signature"], "signature")
    want_str(d["timestamp_rfc3161"], "timestamp_rfc3161")
    b64_canonical(d["timestamp_rfc3161"], "timestamp_rfc3161")
    for i, g in enumerate(d["gaps"]):
        schema_gap(g, "gaps[%d]" % i)
    prev, ids = 0, set()
    for i, r in enumerate(d["records"]):
        p = "records[%d]" % i
        schema_record(r, p)
        want(r["sequence"].value > prev, "%s.sequence: not strictly increasing" % p)
        prev = r["sequence"].value
        want(r["record_id"] not in ids, "%s.record_id: duplicate" % p)
        ids.add(r["record_id"])


def schema_gap(g, p):
    want(isinstance(g, dict), "%s: want an object" % p)
    no_escaped_names(g, p)
    want_members(g, p, ["gap_id", "gap_type", "severity", "check", "sequence", "timestamp"], ["sequence_end"],
                 nullable=("check", "sequence"))
    want_id(g["gap_id"], p + ".gap_id")
    want_id(g["gap_type"], p + ".gap_type")
    want_enum(g["severity"], p + ".severity", SEVERITIES)
    if g["check"] is not None:
        want_name(g["check"], p + ".check")
    if g["sequence"] is not None:
        want_int(g["sequence"], p + ".sequence", 1, MAX_INT)
    parse_time(g["timestamp"], p + ".timestamp")
    t = g["gap_type"]
    if t in FIXED_SEVERITY:
        want(g["severity"] == FIXED_SEVERITY[t], "%s.severity: a %s gap is %s" % (p, t, FIXED_SEVERITY[t]))
    if "sequence_end" in g:
        want(t == "sequence_missing", "%s.sequence_end: only on sequence_missing gaps" % p)
    if t == "sequence_missing":
        want(g["sequence"] is not None and "sequence_end" in g, "%s: sequence_missing needs sequence and sequence_end" % p)
        want_int(g["sequence_end"], p + ".sequence_end", g["sequence"].value, MAX_INT)
    if t == "chain_break":
        want(g["sequence"] is not None, "%s: chain_break needs a sequence" % p)
    if t == "empty_run":
        want(g["check"] is None and g["sequence"] is None, "%s: an empty_run gap has no check or sequence" % p)


def schema_record(r, p):
    want(isinstance(r, dict), "%s: want an object" % p)
    no_escaped_names(r, p)
    want_members(r, p, REC_REQ, REC_OPT)
    want_id(r["record_id"], p + ".record_id", "rec_")
    want_int(r["sequence"], p + ".sequence", 1, MAX_INT)
    want_name(r["check"], p + ".check")
    want_name(r["manifest_id"], p + ".manifest_id")
    want_enum(r["check_result"], p + ".check_result", RESULTS)
    want_enum(r["proof_level"], p + ".proof_level", LEVELS)
    want_enum(r["commitment_algorithm"], p + ".commitment_algorithm", ["sha256", "poseidon2"])
    want_commitment(r["commitment_hash"], p + ".commitment_hash")
    want(r["commitment_hash"].startswith(r["commitment_algorithm"] + ":"),
         "%s.commitment_algorithm: is not the prefix of commitment_hash" % p)
    if "output_commitment" in r:
        want_commitment(r["output_commitment"], p + ".output_commitment")
    if "onnx_model_hash" in r:
        want_sha(r["onnx_model_hash"], p + ".onnx_model_hash")
    want_enum(r["visibility"], p + ".visibility", VISIBILITIES)
    parse_time(r["recorded_at"], p + ".recorded_at")
    want_sha(r["chain_hash"], p + ".chain_hash")
    if "stage_type" in r:
        want_enum(r["stage_type"], p + ".stage_type", ["bound_committed_inference", "open_source_ml", "mlp_head"])
    if "stage_part" in r:
        want_enum(r["stage_part"], p + ".stage_part", ["pre_conditions", "inference", "post_conditions"])
    if "details" in r:
        want(isinstance(r["details"], dict), "%s.details: want an object" % p)
        numbers_in(r["details"], p + ".details")
        want(len(sjson.jcs(r["details"])) <= 16384, "%s.details: more than 16384 bytes in canonical form" % p)
    want(("review" in r) == (r["proof_level"] == "witnessed"), "%s.review: present iff proof_level is witnessed" % p)
    want(("bounded_inference" in r) == (r["proof_level"] == "operator_bound"),
         "%s.bounded_inference: present iff proof_level is operator_bound" % p)
    want(not ("review" in r and "check_session" in r), "%s: check_session and review together" % p)
    if "zk_proof" in r:
        # Groth16 is not implemented here: the block's shape only (the
        # zk_proofs check then reports the proof unverified).
        z = r["zk_proof"]
        want(isinstance(z, dict) and all(isinstance(z.get(k), str) for k in ("system", "circuit", "circuit_id", "proof")),
             "%s.zk_proof: want an object with system, circuit, circuit_id and proof" % p)
        want(r["proof_level"] in ("verifiable_inference", "mathematical"),
             "%s.zk_proof: only with proof_level verifiable_inference or mathematical" % p)
        want(r["commitment_algorithm"] == "poseidon2", "%s.zk_proof: the commitment_algorithm must be poseidon2" % p)
        schema_zk_proof(r, z, p + ".zk_proof")
    if "review" in r:
        v = r["review"]
        q = p + ".review"
        want_members(v, q, ["session_id", "reviewer_key_id", "reviewer_public_key", "reviewer_signature",
                            "min_duration_seconds", "check_open_tst", "check_close_tst"],
                     ["display_content_hash", "rationale_hash"])
        want_id(v["session_id"], q + ".session_id")
        want_str(v["reviewer_key_id"], q + ".reviewer_key_id")  # the reviews check compares it with the key's id
        b64_canonical(want_str(v["reviewer_public_key"], q + ".reviewer_public_key"), q + ".reviewer_public_key")
        want_sig(v["reviewer_signature"], q + ".reviewer_signature")
        for k in ("display_content_hash", "rationale_hash"):
            if k in v:
                want_commitment(v[k], q + "." + k)
        want_int(v["min_duration_seconds"], q + ".min_duration_seconds", 0, 2**40)
        for k in ("check_open_tst", "check_close_tst"):
            b64_canonical(want_str(v[k], q + "." + k), q + "." + k)
    if "check_session" in r:
        v = r["check_session"]
        q = p + ".check_session"
        want_members(v, q, ["session_id", "check_open_tst", "check_close_tst"], [])
        want_id(v["session_id"], q + ".session_id")
        for k in ("check_open_tst", "check_close_tst"):
            b64_canonical(want_str(v[k], q + "." + k), q + "." + k)
    if "bounded_inference" in r:
        v = r["bounded_inference"]
        q = p + ".bounded_inference"
        want_members(v, q, ["profile_id", "gpu_class", "onnx_model_hash", "trace_mode", "operator_count",
                            "merkle_root"], [])
        want(PROFILE_ID_RE.match(want_str(v["profile_id"], q + ".profile_id")), q + ".profile_id: malformed")
        want_enum(v["gpu_class"], q + ".gpu_class", GPU_CLASSES)
        want_sha(v["onnx_model_hash"], q + ".onnx_model_hash")
        want_enum(v["trace_mode"], q + ".trace_mode", TRACE_MODES)
        want_int(v["operator_count"], q + ".operator_count", 1, 2**32)
        want_sha(v["merkle_root"], q + ".merkle_root")
    for k in ("disclosed_input", "disclosed_output"):
        if k in r:
            want_str(r[k], p + "." + k)  # its base64 form is checked by the disclosures check
    if "field_digests" in r:
        want(isinstance(r["field_digests"], list) and all(isinstance(x, str) for x in r["field_digests"]),
             p + ".field_digests: want an array of strings")
    if "disclosures" in r:
        want(isinstance(r["disclosures"], list), p + ".disclosures: want an array")
        for i, x in enumerate(r["disclosures"]):
            q = "%s.disclosures[%d]" % (p, i)
            want_members(x, q, ["salt", "field", "value"], [], nullable=("value",))
            want_str(x["salt"], q + ".salt")
            want_str(x["field"], q + ".field")
            numbers_in(x["value"], q + ".value")
    if "manifest" in r:
        schema_manifest(r["manifest"], p + ".manifest")


ZK_CIRCUIT_MEMBERS = {"mlp_head": ("class", "logits"), "threshold_check": ("threshold",),
                      "below_threshold_check": ("threshold",), "truncation_check": ("max_tokens",)}


def schema_zk_proof(r, z, q):
    """FORMATS.md "zk_proof block": every member's rule, and the members that
    go with each circuit (0 is a value here: class 0, threshold 0)."""
    want(z["system"] == "groth16-bn254", "%s.system: %s is not groth16-bn254" % (q, z["system"]))
    want(z["circuit"] in ZK_CIRCUIT_MEMBERS, "%s.circuit: %s is not a circuit" % (q, z["circuit"]))
    want_sha(z["circuit_id"], q + ".circuit_id")
    proof = b64_canonical(z["proof"], q + ".proof")
    want(1 <= len(proof) <= 1024, "%s.proof: %d bytes, want 1-1024" % (q, len(proof)))
    mine = ZK_CIRCUIT_MEMBERS[z["circuit"]]
    for k in z:
        want(k in ("system", "circuit", "circuit_id", "proof") + mine,
             "%s.%s: does not go with circuit %s" % (q, k, z["circuit"]))
    for k in mine:
        want(k in z, "%s.%s: required for circuit %s" % (q, k, z["circuit"]))
    if z["circuit"] == "mlp_head":
        want(r["proof_level"] == "verifiable_inference", "%s: mlp_head proves an inference: verifiable_inference" % q)
        want("onnx_model_hash" in r, "%s: an mlp_head proof needs the record's onnx_model_hash" % q)
        logits = z["logits"]
        want(isinstance(logits, list) and 2 <= len(logits) <= 64, "%s.logits: want 2-64 integers" % q)
        for i, v in enumerate(logits):
            want_int(v, "%s.logits[%d]" % (q, i), -2**31, 2**31 - 1)
        want_int(z["class"], q + ".class", 0, len(logits) - 1)
    else:
        want(r["proof_level"] == "mathematical", "%s: circuit %s proves a condition: mathematical" % (q, z["circuit"]))
        want(r["check_result"] in ("pass", "fail"), "%s: a condition proof proves pass or fail, not %s"
             % (q, r["check_result"]))
        for k in mine:
            want_int(z[k], q + "." + k, 0, 2**32 - 1)


def schema_manifest(m, p):
    want_members(m, p, ["name", "version", "stages"], [])
    want_name(m["name"], p + ".name", 1, 128)
    want_name(m["version"], p + ".version", 1, 64)
    want(isinstance(m["stages"], list) and len(m["stages"]) <= 256, p + ".stages: want an array (at most 256)")
    names = set()
    for i, s in enumerate(m["stages"]):
        q = "%s.stages[%d]" % (p, i)
        want_members(s, q, ["stage_name", "proof_ceiling", "regulatory_references"], ["disclose"])
        want_name(s["stage_name"], q + ".stage_name", 1, 128)
        want(s["stage_name"] not in names, q + ".stage_name: duplicate")
        names.add(s["stage_name"])
        want_enum(s["proof_ceiling"], q + ".proof_ceiling", LEVELS)
        refs = s["regulatory_references"]
        want(isinstance(refs, list) and len(refs) <= 32 and len(set(map(str, refs))) == len(refs),
             q + ".regulatory_references: want at most 32 distinct names")
        for j, x in enumerate(refs):
            want_name(x, "%s.regulatory_references[%d]" % (q, j))
        if "disclose" in s:
            dl = s["disclose"]
            want(isinstance(dl, list) and len(dl) <= 64 and len(set(map(str, dl))) == len(dl),
                 q + ".disclose: want at most 64 distinct names")
            for j, x in enumerate(dl):
                want_name(x, "%s.disclose[%d]" % (q, j), 1, 128)


# ------------------------------------------------------------------ profile

def schema_profile(d):
    want(isinstance(d, dict), "the profile is not a JSON object")
    want_members(d, "profile", ["schema", "profile_id", "model_class", "architecture", "calibrated_gpu_classes",
                                "calibration_passes", "calibration_date", "safety_margin", "operators", "models"],
                 ["drift_definition", "measured", "coverage", "signed_by", "signing_key_id", "profile_signature"])
    want(d["schema"] == "svc.profile/v1", "schema: not svc.profile/v1")
    want(PROFILE_ID_RE.match(want_str(d["profile_id"], "profile_id")), "profile_id: malformed")
    want(want_str(d["model_class"], "model_class") != "", "model_class: empty")
    want(want_str(d["architecture"], "architecture") != "", "architecture: empty")
    g = d["calibrated_gpu_classes"]
    want(isinstance(g, list) and g and len(set(map(str, g))) == len(g), "calibrated_gpu_classes: want distinct classes")
    for x in g:
        want_enum(x, "calibrated_gpu_classes", GPU_CLASSES)
    want_int(d["calibration_passes"], "calibration_passes", 1, 2**40)
    cd = want_str(d["calibration_date"], "calibration_date")
    want(re.fullmatch(r"\d{4}-\d{2}-\d{2}", cd), "calibration_date: want YYYY-MM-DD")
    try:
        datetime.date.fromisoformat(cd)
    except ValueError:
        raise SchemaError("calibration_date: not a valid date") from None
    want_number(d["safety_margin"], "safety_margin", 1, 1000)
    ops = d["operators"]
    want(isinstance(ops, dict) and ops, "operators: want a non-empty object")
    for k, v in ops.items():
        want_enum(k, "operators", OPERATOR_CLASSES)
        want_members(v, "operators." + k, ["p99", "p99_9", "p99_99"], [])
        x, y, z = (want_number(v[n], "operators.%s.%s" % (k, n), 0, float("inf")) for n in ("p99", "p99_9", "p99_99"))
        want(x <= y <= z, "operators.%s: want p99 <= p99_9 <= p99_99" % k)
    models = d["models"]
    want(isinstance(models, list) and models, "models: want a non-empty array")
    seen = set()
    for i, m in enumerate(models):
        q = "models[%d]" % i
        want_members(m, q, ["onnx_model_hash", "operator_counts"], ["hub_model_id"])
        want_sha(m["onnx_model_hash"], q + ".onnx_model_hash")
        want(m["onnx_model_hash"] not in seen, q + ".onnx_model_hash: duplicate")
        seen.add(m["onnx_model_hash"])
        if "hub_model_id" in m:
            want_str(m["hub_model_id"], q + ".hub_model_id")
        oc = m["operator_counts"]
        want(isinstance(oc, dict) and oc, q + ".operator_counts: want a non-empty object")
        for k, v in oc.items():
            want_enum(k, q + ".operator_counts", TRACE_MODES)
            want_int(v, "%s.operator_counts.%s" % (q, k), 1, 2**32)
    if "drift_definition" in d:
        want_enum(d["drift_definition"], "drift_definition", ["svc.drift/v1", "svc.drift/v2"])
    if "measured" in d:
        ms = d["measured"]
        want(isinstance(ms, dict), "measured: want an object")
        for k, v in ms.items():
            want_enum(k, "measured", OPERATOR_CLASSES)
            q = "measured." + k
            want_members(v, q, ["samples", "p99", "p99_9", "p99_99", "max"], [])
            want_int(v["samples"], q + ".samples", 1, MAX_INT)
            a, b, c, m = (want_number(v[n], "%s.%s" % (q, n), 0, float("inf")) for n in ("p99", "p99_9", "p99_99", "max"))
            want(a <= b <= c <= m, "%s: want p99 <= p99_9 <= p99_99 <= max" % q)
    if "coverage" in d:
        cov = d["coverage"]
        want(isinstance(cov, list) and len(cov) <= 64, "coverage: want an array of at most 64 machines")
        for i, x in enumerate(cov):
            q = "coverage[%d]" % i
            want_members(x, q, ["cpu", "kernel_path", "passes"], [])
            want(want_str(x["cpu"], q + ".cpu") != "", q + ".cpu: empty")
            want(want_str(x["kernel_path"], q + ".kernel_path") != "", q + ".kernel_path: empty")
            want_int(x["passes"], q + ".passes", 1, MAX_INT)
    if "signed_by" in d:
        want_str(d["signed_by"], "signed_by")
    want("signing_key_id" in d and "profile_signature" in d, "the profile is unsigned")
    want(KEYID_RE.match(want_str(d["signing_key_id"], "signing_key_id")), "signing_key_id: want 16 lowercase hex digits")
    want_sig(d["profile_signature"], "profile_signature")


def verify_profile(data: bytes, trust: Trust):
    """Returns the profile, or raises Fail (SCHEMA ERROR, UNKNOWN SIGNING KEY, SIGNATURE INVALID)."""
    d = read_document(data)
    try:
        schema_profile(d)
    except SchemaError as e:
        raise Fail("SCHEMA ERROR", str(e)) from None
    pub = trust.keys.get(d["signing_key_id"])
    if pub is None:
        raise Fail("UNKNOWN SIGNING KEY", "profile signing key %s is not in the trust bundle" % d["signing_key_id"])
    signed = sjson.jcs({k: v for k, v in d.items() if k != "profile_signature"})
    if not crypto_prims.ed25519_verify(pub, signed, base64.b64decode(d["profile_signature"][8:])):
        raise Fail("SIGNATURE INVALID", "the profile signature does not verify")
    return d


# ------------------------------------------------------------------ timestamps

def verify_token(b64, data: bytes, trust: Trust, use_openssl, what):
    """Checks an RFC 3161 token over data; returns its genTime (seconds). Raises Fail."""
    if not trust.certs:
        raise Fail("TSA ROOT MISSING", "%s: the trust bundle holds no TSA root CERTIFICATE" % what, True)
    raw = base64.b64decode(b64)
    try:
        info = der.parse_timestamp(raw)
    except (der.DERError, IndexError, ValueError) as e:
        raise Fail("TIMESTAMP INVALID", "%s: %s" % (what, e)) from None
    if info.status not in (0, 1):
        raise Fail("TIMESTAMP INVALID", "%s: status %d is not granted" % (what, info.status))
    if info.gen_time is None:
        raise Fail("TIMESTAMP INVALID", "%s: the response holds no token" % what)
    if info.version != 1 or info.policy is None or info.serial is None:
        raise Fail("TIMESTAMP INVALID", "%s: TSTInfo needs version 1, a policy and a serial number" % what)
    if info.critical_extension:
        raise Fail("TIMESTAMP INVALID", "%s: TSTInfo has a critical extension" % what)
    try:
        tsa.verify(raw, data=data, anchors=trust.cert_ders)
    except tsa.TSAError as e:
        raise Fail(e.code, "%s: %s" % (what, e.msg)) from None
    if use_openssl:
        openssl_ts_verify(raw, data, trust, info.gen_time, what)
    return gen_time_ns(info.gen_time_text)


def gen_time_ns(text):
    """A DER GeneralizedTime (YYYYMMDDHHMMSS[.f…]Z) in integer nanoseconds."""
    m = re.match(r"^(\d{14})(\.\d+)?Z$", text)
    return int(datetime.datetime.strptime(m.group(1), "%Y%m%d%H%M%S").replace(
        tzinfo=datetime.timezone.utc).timestamp()) * NS + frac_ns(m.group(2))


def lasted_at_least(opened, closed, seconds):
    """Whether closed (ns) is at least seconds after opened (ns), exactly."""
    return closed - opened >= seconds * NS


def openssl_ts_verify(raw, data, trust, gen_time, what):
    """The CMS signature and chain, as docs/VERIFYING.md step 9 does it with openssl."""
    with tempfile.TemporaryDirectory() as tmp:
        def path(n):
            return os.path.join(tmp, n)
        open(path("resp.der"), "wb").write(raw)
        open(path("data.bin"), "wb").write(data)
        open(path("roots.pem"), "w").write("\n".join(trust.certs) + "\n")
        _, s, e = der.read_tlv(raw, 0)
        bare = der.read_tlv(raw, s)[0] == 0x06  # a TimeStampToken (ContentInfo), not a TimeStampResp
        if bare:
            open(path("tok.der"), "wb").write(raw)
        else:
            tok = subprocess.run(["openssl", "ts", "-reply", "-in", path("resp.der"), "-token_out", "-out",
                                  path("tok.der")], capture_output=True)
            if tok.returncode:
                raise Fail("TIMESTAMP INVALID", "%s: openssl cannot read the response" % what)
        certs = subprocess.run(["openssl", "pkcs7", "-inform", "DER", "-in", path("tok.der"), "-print_certs"],
                               capture_output=True)
        open(path("certs.pem"), "wb").write(certs.stdout)
        out = subprocess.run(["openssl", "ts", "-verify", "-data", path("data.bin"), "-in", path("resp.der")]
                             + (["-token_in"] if bare else []) + [
                             "-CAfile", path("roots.pem"), "-untrusted", path("certs.pem"),
                             "-attime", str(int(gen_time)), "-partial_chain"], capture_output=True, text=True)
        if out.returncode:
            msg = out.stderr + out.stdout
            code = "UNTRUSTED TIMESTAMP AUTHORITY" if "certificate" in msg.lower() else "TIMESTAMP INVALID"
            raise Fail(code, "%s: openssl ts -verify: %s" % (what, msg.strip().splitlines()[-1] if msg.strip() else "failed"))


# ------------------------------------------------------------------ the checks

class Report:
    def __init__(self):
        self.checks = {c: {"name": c, "status": "not_applicable", "message": "not run"} for c in CHECKS}

    def set(self, name, status, message, code=None, missing_trust=False, details=None):
        c = {"name": name, "status": status, "message": message}
        if code:
            c["code"] = code
        if missing_trust:
            c["missing_trust"] = True
        if details:
            c["details"] = details
        self.checks[name] = c

    def run(self, name, fn):
        try:
            r = fn()
        except Fail as f:
            self.set(name, "fail", f.msg, f.code, f.missing_trust)
            return
        if r is None:
            return
        status, msg = r[0], r[1]
        self.set(name, status, msg, details=r[2] if len(r) > 2 else None)

    def verdict(self):
        failed = [self.checks[c] for c in CHECKS if self.checks[c]["status"] == "fail"]
        if not failed:
            return "VALID", 0
        real = [c for c in failed if not c.get("missing_trust")]
        if real:
            return "INVALID \u2014 " + real[0]["code"], 1
        codes = []
        for c in failed:
            if c["code"] not in codes:
                codes.append(c["code"])
        return "UNVERIFIED \u2014 " + ", ".join(codes), 3


def chain_walk(d):
    """Returns (breaks, holes): breaks maps a record's sequence to 'hole' or 'hash'; holes lists (a, b)."""
    prev = hashlib.sha256(("svc.chain.v1:" + d["run_id"]).encode()).digest()
    prev_seq = 0
    breaks, holes = {}, []
    for r in d["records"]:
        seq = int(r["sequence"].raw)
        if seq != prev_seq + 1:
            breaks[seq] = "hole"
            holes.append((prev_seq + 1, seq - 1))
        else:
            body = sjson.jcs({k: v for k, v in r.items() if k != "chain_hash"})
            if "sha256:" + hashlib.sha256(prev + body).hexdigest() != r["chain_hash"]:
                breaks[seq] = "hash"
        prev = bytes.fromhex(r["chain_hash"][7:])
        prev_seq = seq
    return breaks, holes


def merkle(leaves):
    def mth(ds):
        if not ds:
            return hashlib.sha256(b"").digest()
        if len(ds) == 1:
            return hashlib.sha256(b"\x00" + ds[0]).digest()
        k = 1
        while k * 2 < len(ds):
            k *= 2
        return hashlib.sha256(b"\x01" + mth(ds[:k]) + mth(ds[k:])).digest()
    return mth(leaves)


def share(count, total):
    if total == 0:
        return 0.0
    return ((count * 20000 + total) // (2 * total)) / 10000


def gap_int(g, k):
    v = g.get(k)
    return None if v is None else int(v.raw)


def check_chain(d, breaks, holes):
    gaps = d["gaps"]
    declared_holes = {(gap_int(g, "sequence"), gap_int(g, "sequence_end")) for g in gaps
                      if g["gap_type"] == "sequence_missing"}
    declared_breaks = {gap_int(g, "sequence") for g in gaps if g["gap_type"] == "chain_break"}
    undeclared = []
    for seq, kind in sorted(breaks.items()):
        if kind == "hole":
            a, b = [h for h in holes if h[1] == seq - 1][0]
            if (a, b) not in declared_holes:
                undeclared.append("sequences %d-%d missing before record %d" % (a, b, seq))
        elif seq not in declared_breaks:
            undeclared.append("record %d: chain hash does not follow from its predecessor" % seq)
    if undeclared:
        raise Fail("CHAIN BROKEN", "; ".join(undeclared))
    if breaks and d["chain_intact"]:
        raise Fail("CHAIN BROKEN", "chain_intact is true but the chain has %d break(s)" % len(breaks))
    if not breaks and not d["chain_intact"]:
        raise Fail("CHAIN MISMATCH", "chain_intact is false but the chain has no break")
    if breaks:
        return "warn", "%d break(s), all declared by gaps" % len(breaks)
    return "pass", "chain intact (%d records)" % len(d["records"])


def check_gaps(d, breaks, holes):
    recs, gaps = d["records"], d["gaps"]
    problems = []
    hole_set = set(holes)
    hash_breaks = {s for s, k in breaks.items() if k == "hash"}
    seen_breaks = set()
    for g in gaps:
        t = g["gap_type"]
        if t == "sequence_missing":
            h = (gap_int(g, "sequence"), gap_int(g, "sequence_end"))
            if h not in hole_set:
                problems.append("sequence_missing %d-%d is not a hole of the records" % h)
        elif t == "chain_break":
            s = gap_int(g, "sequence")
            if s not in hash_breaks:
                problems.append("chain_break at %d: that record's chain hash follows (or its break is a hole)" % s)
            if s in seen_breaks:
                problems.append("chain_break at %d declared twice" % s)
            seen_breaks.add(s)
        elif t == "empty_run" and recs:
            problems.append("empty_run gap on a VPEC with records")
    if not recs and sum(1 for g in gaps if g["gap_type"] == "empty_run") != 1:
        problems.append("a VPEC without records needs its one empty_run gap")
    if problems:
        raise Fail("GAP MISMATCH", "; ".join(problems))
    if gaps:
        return "warn", "%d governance gap(s)" % len(gaps), ["%s (%s)" % (esc(g["gap_type"]), g["severity"]) for g in gaps]
    return "pass", "no gaps"


def check_summary(d, breaks):
    recs = d["records"]
    n = len(recs)
    bad = []
    levels = [r["proof_level"] for r in recs]

    def eq(name, want_v):
        got = d[name]
        gv = got.value if isinstance(got, Num) else got
        if gv != want_v:
            bad.append("%s is %s, want %s" % (name, sjson.jcs_text(got), sjson.jcs_text(want_v)))

    eq("total_checks_run", n)
    eq("checks_passed", sum(1 for r in recs if r["check_result"] == "pass"))
    eq("checks_failed", sum(1 for r in recs if r["check_result"] == "fail"))
    floor = max((LEVELS.index(x) for x in levels), default=LEVELS.index("attestation"))
    eq("proof_level_floor", LEVELS[floor])
    bd = {lv: float(levels.count(lv)) for lv in LEVELS if lv in levels}
    if {k: v.value for k, v in d["proof_level_breakdown"].items()} != bd:
        bad.append("proof_level_breakdown differs from the records")
    eq("provable_surface", share(sum(1 for x in levels if x in LEVELS[:3]), n))
    psb = {("bounded_inference" if lv == "operator_bound" else lv): share(levels.count(lv), n) for lv in bd}
    if {k: v.value for k, v in d["provable_surface_breakdown"].items()} != psb:
        bad.append("provable_surface_breakdown differs from the records")
    eq("is_clean", not breaks and not d["gaps"])
    env = "production" if d["api_key_id"].startswith("pk_live_") else "sandbox"
    eq("environment", env)
    if bad:
        raise Fail("SUMMARY MISMATCH", "; ".join(bad))
    return "pass", "summary fields follow from the records"


# A decomposition's proved parts: the circuit and stage part each must have.
CONDITION_PARTS = {"threshold_check": ("below_threshold_check", "post_conditions"),
                   "truncation_check": ("truncation_check", "pre_conditions")}


def condition_link(d, r):
    """FORMATS.md "Condition records of a decomposition": a proved condition of
    a Bounded Inference check is the part its circuit proves, names an
    inference record of its check, is listed by exactly one, and its details
    state the bound its proof is about. Returns the problem, or None."""
    z = r["zk_proof"]
    if (z.get("circuit") not in crypto_prims.CONDITION_CIRCUITS
            or r.get("stage_type") not in ("bound_committed_inference", "open_source_ml")
            or r.get("stage_part") not in ("pre_conditions", "post_conditions")):
        return None
    base, _, part = r["check"].rpartition(":")
    want_circuit, want_stage = CONDITION_PARTS.get(part, (None, None)) if base else (None, None)
    if z["circuit"] != want_circuit or r["stage_part"] != want_stage:
        return ("condition circuit mismatch: check %s is not a decomposition's threshold_check (below_threshold_check,"
                " post_conditions) or truncation_check (truncation_check, pre_conditions): %s in %s"
                % (esc(r["check"]), z["circuit"], r["stage_part"]))
    det = r.get("details") or {}
    inp = det.get("input_commitment")
    if not isinstance(inp, str) or not inp:
        return "condition not linked: no details.input_commitment"
    infs = [o for o in d["records"] if o.get("stage_part") == "inference" and o.get("stage_type") == r.get("stage_type")
            and o["check"] == base]
    if not any(o["commitment_hash"] == inp for o in infs):
        return "condition not linked: %s is the commitment of no inference record of check %s" % (inp, base)
    listing = [o for o in infs if isinstance((o.get("details") or {}).get("condition_commitments"), dict)
               and o["details"]["condition_commitments"].get(part) == r["commitment_hash"]]
    if not any(o["commitment_hash"] == inp for o in listing):
        return "condition not linked: no inference record of check %s on that input lists %s" % (base, r["commitment_hash"])
    if len(listing) != 1:
        return "condition not linked: %s is listed by %d inference records of check %s, want exactly 1" % (
            r["commitment_hash"], len(listing), base)
    if "output_commitment" in r and r["output_commitment"] != listing[0].get("output_commitment"):
        return "condition not linked: output_commitment is not its inference record's"
    if part == "threshold_check" and "threshold" in det:
        t, zt = det["threshold"], z.get("threshold")
        if not isinstance(t, sjson.Num) or not isinstance(zt, sjson.Num) or crypto_prims.quantize_probability(t.value) != zt.value:
            return "threshold mismatch"
    if part == "truncation_check" and "max_tokens" in det:
        m, zm = det["max_tokens"], z.get("max_tokens")
        if not isinstance(m, sjson.Num) or not isinstance(zm, sjson.Num) or m.value != zm.value:
            return "max_tokens mismatch"
    return None


def listed_conditions(d):
    """The other direction: each condition commitment an inference record lists
    is carried by exactly one proved condition record of that part of its
    check, naming this inference's input. Returns the problem."""
    for o in d["records"]:
        det = o.get("details")
        if o.get("stage_part") != "inference" or not isinstance(det, dict) or "condition_commitments" not in det:
            continue
        cs = det["condition_commitments"]
        if not isinstance(cs, dict):
            return "record %s (%s): condition not linked: details.condition_commitments is not an object" % (
                o["sequence"].raw, o["check"])
        for part in sorted(cs):
            n = sum(1 for r in d["records"] if "zk_proof" in r and r["check"] == o["check"] + ":" + part
                    and r.get("stage_type") == o.get("stage_type") and r["commitment_hash"] == cs[part]
                    and isinstance(r.get("details"), dict) and r["details"].get("input_commitment") == o["commitment_hash"])
            if n != 1:
                return "record %s (%s): condition not linked: %s is carried by %d proved %s records of its input" % (
                    o["sequence"].raw, o["check"], cs[part] if isinstance(cs[part], str) else "a non-string", n, part)
    return None


def check_evidence(d):
    """FORMATS.md "Claims and their evidence": an unproved mathematical
    condition <check>:<part> stands beside the operator_bound inference
    record of its decomposition: check <check>, the same input."""
    recs = d["records"]
    inferences = {(r["check"], r["commitment_hash"]) for r in recs
                  if r["proof_level"] == "operator_bound" and "bounded_inference" in r
                  and r.get("stage_type") == "bound_committed_inference" and r.get("stage_part") == "inference"}
    for r in recs:
        if r["proof_level"] != "mathematical":
            continue
        base, colon, part = r["check"].rpartition(":")
        ok = (r.get("stage_type") == "bound_committed_inference"
              and r.get("stage_part") in ("pre_conditions", "post_conditions")
              and colon and part and (base, r["commitment_hash"]) in inferences)
        # or a proof of a condition circuit (the zk_proofs check reports the proof)
        ok = ok or r.get("zk_proof", {}).get("circuit") in crypto_prims.CONDITION_CIRCUITS
        if not ok:
            raise Fail("CLAIM WITHOUT EVIDENCE", "record %s claims mathematical without evidence" % r["sequence"].raw)
    return "pass", "every claim carries its evidence"


def check_time(d, t):
    lim = t + SKEW
    recs = d["records"]
    floor = min([parse_time(r["recorded_at"], "") for r in recs] + [parse_time(d["issued_at"], "")]) - SKEW
    # opened_at (optional): no record more than the skew before the run
    # was opened; opened_at itself not after the timestamp (+5 min).
    opened = parse_time(d["opened_at"], "") if "opened_at" in d else None
    if opened is not None and opened > lim:
        raise Fail("TIME VIOLATION", "opened_at %s is after the VPEC timestamp (+5 min)" % d["opened_at"])
    for r in recs:
        if parse_time(r["recorded_at"], "") > lim:
            raise Fail("TIME VIOLATION", "record %s: recorded_at %s is after the VPEC timestamp (+5 min)"
                       % (r["sequence"].raw, r["recorded_at"]))
        if opened is not None and parse_time(r["recorded_at"], "") < opened - SKEW:
            raise Fail("TIME VIOLATION", "record %s: recorded_at %s is before the run was opened (opened_at %s, -5 min)"
                       % (r["sequence"].raw, r["recorded_at"], d["opened_at"]))
    for g in d["gaps"]:
        gt = parse_time(g["timestamp"], "")
        if gt > lim or gt < floor:
            raise Fail("TIME VIOLATION", "gap %s: timestamp %s is outside the run" % (esc(g["gap_id"]), g["timestamp"]))
    return lim


def session_tokens(r):
    s = r.get("review") or r.get("check_session")
    if s is None:
        return None
    sid = s["session_id"]
    return (s, ("svc.check-open.v1:" + sid).encode(), ("svc.check-close.v1:%s:%s" % (sid, r["commitment_hash"])).encode())


def check_reviews(d, trust, use_openssl, times):
    recs = [r for r in d["records"] if "review" in r or "check_session" in r]
    if not recs:
        return "not_applicable", "no witnessed records"
    n = 0
    for r in recs:
        s, open_b, close_b = session_tokens(r)
        seq = r["sequence"].raw
        try:
            to = verify_token(s["check_open_tst"], open_b, trust, use_openssl, "record %s check_open_tst" % seq)
            tc = verify_token(s["check_close_tst"], close_b, trust, use_openssl, "record %s check_close_tst" % seq)
        except Fail as f:
            raise Fail("REVIEW INVALID", f.msg, f.missing_trust) from None
        times.append((seq, to, tc))
        if tc < to:
            raise Fail("REVIEW INVALID", "record %s: the session closes before it opens" % seq)
        if "review" not in r:
            continue
        v = r["review"]
        spki = base64.b64decode(v["reviewer_public_key"])
        if len(spki) != 44 or not spki.startswith(SPKI_PREFIX):
            raise Fail("REVIEW INVALID", "record %s: reviewer_public_key is not an Ed25519 SPKI" % seq)
        if key_id(spki) != v["reviewer_key_id"]:
            raise Fail("REVIEW INVALID", "record %s: reviewer_key_id is not the key id of reviewer_public_key" % seq)
        st = {"type": "svc.review/v1", "run_id": d["run_id"], "check": r["check"], "manifest_id": r["manifest_id"],
              "check_result": r["check_result"], "commitment_hash": r["commitment_hash"], "session_id": v["session_id"]}
        for k in ("display_content_hash", "rationale_hash"):
            if v.get(k):
                st[k] = v[k]
        if not crypto_prims.ed25519_verify(spki[12:], sjson.jcs(st), base64.b64decode(v["reviewer_signature"][8:])):
            raise Fail("REVIEW INVALID", "record %s: the reviewer signature does not verify" % seq)
        if not lasted_at_least(to, tc, int(v["min_duration_seconds"].raw)):
            raise Fail("REVIEW INVALID", "record %s: the review lasted %d ns, minimum %s s"
                       % (seq, tc - to, v["min_duration_seconds"].raw))
        n += 1
    return "pass", "%d review(s) and %d session(s) verified" % (n, len(recs))


def check_profile(d, profiles, trust):
    bi = [r for r in d["records"] if r["proof_level"] == "operator_bound"]
    if not bi and not profiles:
        return "not_applicable", "no Bounded Inference records"
    by_id = {}
    for name, data in profiles:
        try:
            p = verify_profile(data, trust)
        except Fail as f:
            raise Fail("PROFILE INVALID", "%s: %s: %s" % (name, f.code, f.msg)) from None
        by_id[p["profile_id"]] = p
    for r in bi:
        b = r["bounded_inference"]
        p = by_id.get(b["profile_id"])
        if p is None:
            raise Fail("PROFILE NOT AVAILABLE", "profile %s not given" % b["profile_id"], True)
    for r in bi:
        b = r["bounded_inference"]
        p = by_id[b["profile_id"]]
        if b["gpu_class"] not in p["calibrated_gpu_classes"]:
            raise Fail("PROFILE MISMATCH (gpu_class %s)" % b["gpu_class"],
                       "record %s: gpu_class %s is not calibrated" % (r["sequence"].raw, b["gpu_class"]))
        m = [x for x in p["models"] if x["onnx_model_hash"] == b["onnx_model_hash"]]
        if not m:
            raise Fail("PROFILE MISMATCH", "record %s: the profile does not list the model" % r["sequence"].raw)
        oc = m[0]["operator_counts"].get(b["trace_mode"])
        if oc is None or int(oc.raw) != int(b["operator_count"].raw):
            raise Fail("PROFILE MISMATCH", "record %s: operator_count %s, the profile gives %s"
                       % (r["sequence"].raw, b["operator_count"].raw, oc.raw if oc else "none"))
    return "pass", "%d Bounded Inference record(s) consistent with their profiles" % len(bi)


SEL_MEMBERS = ("field_digests", "disclosures", "manifest")
TR_MEMBERS = ("disclosed_input", "disclosed_output")


def decode_salt(s):
    if not B64URL_RE.match(s) or len(s) % 4 == 1:
        return None
    try:
        b = base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
    except binascii.Error:
        return None
    if base64.urlsafe_b64encode(b).decode().rstrip("=") != s or not 16 <= len(b) <= 64:
        return None
    return b


def check_disclosures(d):
    recs = d["records"]
    if all(r["visibility"] == "opaque" and not any(k in r for k in SEL_MEMBERS + TR_MEMBERS) for r in recs):
        return "not_applicable", "every record is opaque"
    n = 0
    salts, all_digests = {}, {}
    disclosed = []
    for r in recs:
        seq = r["sequence"].raw
        vis = r["visibility"]
        allowed = {"opaque": (), "transparent": TR_MEMBERS, "selective": SEL_MEMBERS}[vis]
        for k in SEL_MEMBERS + TR_MEMBERS:
            if k in r and k not in allowed:
                raise Fail("DISCLOSURE NOT ALLOWED", "record %s: %s in a %s record" % (seq, k, vis))
        if vis in ("transparent", "selective") and r["commitment_algorithm"] != "sha256":
            raise Fail("DISCLOSURE MALFORMED", "record %s: a %s record's commitment is sha256, not %s"
                       % (seq, vis, r["commitment_algorithm"]))
        if vis == "transparent":
            if "disclosed_output" in r and "output_commitment" not in r:
                raise Fail("DISCLOSURE MALFORMED", "record %s: disclosed_output without output_commitment" % seq)
            for member, commit in (("disclosed_input", "commitment_hash"), ("disclosed_output", "output_commitment")):
                if commit not in r:
                    continue
                try:
                    raw = b64_canonical(r.get(member, ""), member)
                except SchemaError as e:
                    raise Fail("DISCLOSURE MALFORMED", "record %s: %s" % (seq, e)) from None
                if len(raw) > 65536:
                    raise Fail("DISCLOSURE MALFORMED", "record %s: %s holds more than 65536 bytes" % (seq, member))
                c = r[commit]
                got = sha256_commit(raw)
                if got != c:
                    raise Fail("DISCLOSURE MISMATCH", "record %s: %s does not match %s" % (seq, member, commit))
            n += 1
            disclosed.append("record %s transparent: input %s" % (seq, esc(r.get("disclosed_input", ""))))
        elif vis == "selective":
            if "manifest" not in r:
                raise Fail("DISCLOSURE MALFORMED", "record %s: a selective record without manifest" % seq)
            fd = r.get("field_digests", [])
            ds = r.get("disclosures", [])
            for x in fd:
                if not SHA_RE.match(x):
                    raise Fail("DISCLOSURE MALFORMED", "record %s: field digest %s is not a SHA-256 hash" % (seq, esc(x)))
            if len(set(fd)) != len(fd):
                raise Fail("DISCLOSURE MALFORMED", "record %s: the same digest twice in field_digests" % seq)
            if [x.encode() for x in fd] != sorted(x.encode() for x in fd):
                raise Fail("DISCLOSURE MALFORMED", "record %s: field_digests are not sorted" % seq)
            for x in fd:
                if x in all_digests:
                    raise Fail("SALT REUSED", "record %s: digest %s also in record %s" % (seq, x, all_digests[x]))
                all_digests[x] = seq
            if sha256_commit(sjson.jcs(fd)) != r["commitment_hash"]:
                raise Fail("DISCLOSURE MISMATCH", "record %s: commitment_hash is not the commitment of field_digests" % seq)
            if sha256_commit(sjson.jcs(r["manifest"])) != r["manifest_id"]:
                raise Fail("DISCLOSURE MISMATCH", "record %s: the carried manifest is not the one manifest_id names" % seq)
            stage = [s for s in r["manifest"]["stages"] if s["stage_name"] == r["check"]]
            declared = set(stage[0].get("disclose", [])) if stage else set()
            fields = set()
            for i, x in enumerate(ds):
                q = "record %s disclosures[%d]" % (seq, i)
                if decode_salt(x["salt"]) is None:
                    raise Fail("DISCLOSURE MALFORMED", "%s: the salt is not canonical base64url of 16-64 bytes" % q)
                if x["field"] in fields:
                    raise Fail("DISCLOSURE MALFORMED", "%s: field %s disclosed twice" % (q, esc(x["field"])))
                fields.add(x["field"])
                if x["salt"] in salts:
                    raise Fail("SALT REUSED", "%s: salt also used in record %s" % (q, salts[x["salt"]]))
                salts[x["salt"]] = seq
                dg = sha256_commit(sjson.jcs([x["salt"], x["field"], x["value"]]))
                if dg not in fd:
                    raise Fail("DISCLOSURE MISMATCH", "%s: field %s: its digest is not in field_digests" % (q, esc(x["field"])))
                if x["field"] not in declared:
                    raise Fail("UNDECLARED FIELD", "%s: field %s is not declared by the manifest stage %s"
                               % (q, esc(x["field"]), esc(r["check"])))
                disclosed.append("record %s selective: %s = %s" % (seq, esc(x["field"]), esc(sjson.jcs_text(x["value"]))))
            n += 1
    return "pass", "%d disclosed inputs match their commitments" % n, disclosed


def check_circuit_entries(circuits, trust):
    """The signed circuit entries given (name, bytes): each signed by a
    circuit-signing key of the trust root (any key of a PEM bundle), and,
    with a trust root, that key's window holds its published_at and the
    key was never compromised (an entry carries no timestamp: KEYS.md,
    "Which time a window is checked against"). Raises Fail."""
    root = trust.root
    for name, data in circuits:
        d = read_document(data)
        kid, sig = d.get("signing_key_id"), d.get("circuit_signature")
        if not isinstance(kid, str) or not isinstance(sig, str) or not sig.startswith("Ed25519:"):
            raise Fail("ZK PROOF INVALID", "circuit entry %s: unsigned" % name)
        if root.legacy():
            pub = trust.keys.get(kid)
        else:
            # The key's own entry, whatever its purpose: a signature it made
            # is then refused by purpose below (CIRCUIT KEY WRONG PURPOSE).
            e = root.entry("circuit-signing", kid) or next(
                (x for x in root.entries if x.key_id == kid and x.public_key is not None), None)
            pub = e.public_key if e is not None else None
        signed = sjson.jcs({k: v for k, v in d.items() if k != "circuit_signature"})
        if pub is None or not crypto_prims.ed25519_verify(pub, signed, base64.b64decode(sig[8:])):
            raise Fail("ZK PROOF INVALID", "circuit entry %s: signature by %s does not verify with a circuit-signing key" % (name, kid))
        if root.legacy():
            continue
        try:
            at = parse_time(d.get("published_at"), "published_at")
        except SchemaError as err:
            raise Fail("ZK PROOF INVALID", "circuit entry %s: %s" % (name, err)) from None
        try:
            e = root.key_for("circuit-signing", kid, at)
        except trustroot.Refused as r:
            raise Fail("CIRCUIT KEY " + r.code, "circuit entry %s: %s" % (name, r.msg)) from None
        if e.compromised is not None and not e.forever:
            raise Fail("CIRCUIT KEY COMPROMISED", "circuit entry %s: key %s is marked compromised at %s; an untimestamped"
                       " entry is refused whatever its published_at (%s)" % (name, kid, trustroot.fmt_time(e.compromised), e.window()))


def verify(data: bytes, trust: Trust, profiles, use_openssl=False, log=None, circuits=()):
    """log: the transparency log inputs, bytes or None each: receipt,
    policy, newer, proof, and require_log. circuits: the signed circuit
    entries given, (name, bytes) each."""
    log = log or {}
    rep = Report()
    try:
        d = read_document(data)
    except Fail as f:
        rep.set("schema", "fail", f.msg, f.code)
        if f.code in ("NOT JSON", "TOO LARGE"):
            return rep, "UNREADABLE \u2014 " + f.code, 2
        return rep, "INVALID \u2014 " + f.code, 1
    try:
        shape_scan(d)
    except SchemaError as e:
        rep.set("schema", "fail", str(e), "SCHEMA ERROR")
        return rep, "INVALID \u2014 SCHEMA ERROR", 1
    if d.get("schema") == "svc.vpec.unsigned-offline/v1":
        run = d.get("run_id")
        if not (isinstance(run, str) and run.startswith("run_") and ID_RE.match(run[4:])):
            run = "RUN_ID"
        rep.set("schema", "fail", "an unsigned offline copy", "UNSIGNED OFFLINE VPEC")
        return rep, "UNSIGNED OFFLINE VPEC: fetch the signed one with svc vpec get %s" % run, 1
    try:
        schema_vpec(d)
    except SchemaError as e:
        rep.set("schema", "fail", str(e), "SCHEMA ERROR")
        return rep, "INVALID \u2014 SCHEMA ERROR", 1
    rep.set("schema", "pass", "schema valid (svc.vpec/v1, %d records)" % len(d["records"]))
    sig = base64.b64decode(d["signature"][8:])

    root = trust.root
    signed = sjson.jcs({k: v for k, v in d.items() if k not in ("signature", "timestamp_rfc3161")})

    def signature():
        kid = d["signing_key_id"]
        pub = trust.keys.get(kid)
        if pub is None and not root.legacy():
            pub = next((e.public_key for e in root.entries if e.key_id == kid and e.public_key), None)
        if pub is None:
            raise Fail("UNKNOWN SIGNING KEY", "key %s is not in the trust bundle" % kid)
        if not crypto_prims.ed25519_verify(pub, signed, sig):
            raise Fail("SIGNATURE INVALID", "the Ed25519 signature does not verify")
        if root.legacy():
            return "pass", "Ed25519 signature by %s (valid forever: legacy PEM trust bundle)" % kid
        try:
            at = verify_token(d["timestamp_rfc3161"], sig, trust, False, "timestamp")
        except Fail:
            return "pass", "Ed25519 signature by %s; its window not checked: the timestamp does not verify" % kid
        try:
            e = root.key_for("vpec-signing", kid, at)
        except trustroot.Refused as r:
            raise Fail("UNKNOWN SIGNING KEY" if r.code == "UNKNOWN" else "KEY " + r.code, r.msg) from None
        return "pass", "Ed25519 signature by %s (vpec-signing, %s)" % (kid, e.window())

    rep.run("signature", signature)
    breaks, holes = chain_walk(d)
    rep.run("chain", lambda: check_chain(d, breaks, holes))

    def merkle_check():
        root = "sha256:" + merkle([r["commitment_hash"].encode() for r in d["records"]]).hex()
        if root != d["merkle_root"]:
            raise Fail("MERKLE ROOT MISMATCH", "merkle_root is not the root over the commitments")
        return "pass", "merkle root over %d commitments" % len(d["records"])

    rep.run("merkle_root", merkle_check)

    def zk():
        z = [r for r in d["records"] if r["proof_level"] == "verifiable_inference" and "zk_proof" not in r]
        if z:
            raise Fail("ZK PROOF UNVERIFIABLE", "record %s claims verifiable_inference without a zk_proof"
                       % z[0]["sequence"].raw)
        proofs = [r for r in d["records"] if "zk_proof" in r]
        for r in proofs:
            problem = condition_link(d, r)
            if problem:
                raise Fail("ZK PROOF INVALID", "record %s (%s): %s" % (r["sequence"].raw, r["check"], problem))
        problem = listed_conditions(d)
        if problem:
            raise Fail("ZK PROOF INVALID", problem)
        if proofs and circuits:
            # The entries' signatures and key windows are checked; the
            # Groth16 proofs themselves are not (below).
            check_circuit_entries(circuits, trust)
        if proofs:
            raise Fail("ZK PROOF NOT CHECKED", "%d zero-knowledge proof(s): this implementation has no Groth16 verifier"
                       " (svc-verify verify --circuit ENTRY checks them)" % len(proofs), missing_trust=True)
        return "not_applicable", "no record carries a proof"

    rep.run("zk_proofs", zk)
    rep.run("evidence", lambda: check_evidence(d))
    gen = []

    def ts():
        t = verify_token(d["timestamp_rfc3161"], sig, trust, use_openssl, "timestamp")
        if abs(t - parse_time(d["issued_at"], "issued_at")) > TS_WINDOW:
            raise Fail("TIMESTAMP TIME MISMATCH", "genTime is more than 15 minutes away from issued_at")
        gen.append(t)
        if not root.legacy():
            # The TSA root the token chains to must hold genTime in its window.
            raw, refused = base64.b64decode(d["timestamp_rfc3161"]), None
            for e in root.entries:
                if e.purpose != "tsa-root" or not e.cert:
                    continue
                try:
                    tsa.verify(raw, data=sig, anchors=[e.cert])
                except tsa.TSAError:
                    continue
                try:
                    root.key_for("tsa-root", e.key_id, t)
                    refused = None
                    break
                except trustroot.Refused as r:
                    refused = refused or r
            if refused:
                raise Fail("TSA ROOT KEY " + refused.code, refused.msg)
        return "pass", "RFC 3161 token over the signature, signed by a TSA that chains to the trust bundle" + (
            " (also by openssl ts -verify)" if use_openssl else "")

    rep.run("timestamp", ts)
    sessions = []
    rep.run("reviews", lambda: check_reviews(d, trust, use_openssl, sessions))

    def time_check():
        if not gen:
            return "not_applicable", "no verified timestamp"
        lim = check_time(d, gen[0])
        for seq, to, tc in sessions:
            if to > lim or tc > lim:
                raise Fail("TIME VIOLATION", "record %s: a session token is after the VPEC timestamp (+5 min)" % seq)
        return "pass", "time rules hold"

    rep.run("time", time_check)
    rep.run("gaps", lambda: check_gaps(d, breaks, holes))
    rep.run("summary", lambda: check_summary(d, breaks))
    rep.run("profile", lambda: check_profile(d, profiles, trust))
    rep.run("disclosures", lambda: check_disclosures(d))

    def transparency():
        if log.get("receipt") is None:
            if log.get("require_log"):
                raise Fail("NO LOG RECEIPT", "no transparency log receipt given, and one is required")
            return "not_applicable", "no receipt given: inclusion in the log not checked"
        if log.get("policy") is not None:
            policy = log["policy"]
        else:
            policy = trustroot.root_policy(root)
        proof = None
        if log.get("proof") is not None:
            proof = [base64.b64decode(x) for x in log["proof"].decode().splitlines() if x]
        newer = log["newer"].decode("utf-8") if log.get("newer") is not None else None
        try:
            msg, e, cosigned_at = trustroot.check_receipt(log["receipt"], d["vpec_id"], hashlib.sha256(signed).digest(), root,
                                             policy, newer, proof)
        except trustroot.Refused as r:
            raise Fail(r.code, r.msg, r.code == "LOG KEY MISSING") from None
        # The log key's window at the latest time a witness attests, or
        # else the VPEC's genTime (KEYS.md, "Which time").
        at = max([x for x in (cosigned_at, gen[0] if gen else None) if x is not None], default=None)
        if at is None and not e.forever:
            raise Fail("LOG KEY WINDOW NOT CHECKED", "the log key's window is checked at no time: no verified genTime, "
                       "no cosignature", True)
        if at is not None and not e.forever:
            try:
                root.key_for("log-checkpoint", e.key_id, at)
            except trustroot.Refused as r:
                raise Fail("LOG KEY " + r.code, r.msg) from None
        return "pass", msg

    rep.run("transparency", transparency)
    v, code = rep.verdict()
    return rep, v, code


# ------------------------------------------------------------------ worked examples of FORMATS.md

def worked_examples(formats_path, vectors=None):
    """Recomputes every worked-example value FORMATS.md quotes; returns a list of failures."""
    text = open(formats_path, encoding="utf-8").read()
    bad = []
    done = []

    def expect(name, got, want_v):
        done.append(name)
        if got != want_v:
            bad.append("%s: computed %s, the document says %s" % (name, got, want_v))

    # commitment hash
    m = re.search(r"the commitment of the 45 bytes\s+`([^`]+)` is\s+`(sha256:[0-9a-f]{64})`", text)
    if not m:
        bad.append("commitment example not found")
    else:
        expect("commitment example", sha256_commit(m.group(1).encode()), m.group(2))
    # Poseidon2
    sec = text[text.index("## Poseidon2 commitments"):text.index("## Groth16 proofs")]
    ex = re.findall(r"\*\*Worked example (\d)\*\*: (.*?)```\n(.*?)```", sec, re.S)
    if len(ex) != 3:
        bad.append("Poseidon2: want 3 worked examples, found %d" % len(ex))
    payloads = {"1": (b"abc", "svc/poseidon2/bytes/v1"),
                "2": (b"Patient John Doe, DOB 1970-01-01, claim #4411", "svc/poseidon2/bytes/v1"),
                "3": (bytes(v + 128 for v in (-128, -1, 0, 1, 127)), "svc/poseidon2/int8/v1")}
    for num, head, body in ex:
        payload, tag = payloads[num]
        els = [int(x, 16) for x in re.findall(r"^e\d+ = ([0-9a-f]{64})", body, re.M)]
        expect("Poseidon2 example %s elements" % num, els, crypto_prims.poseidon2_elements(tag, payload))
        dg = re.search(r"digest: (poseidon2:[0-9a-f]{64})", body).group(1)
        expect("Poseidon2 example %s digest" % num, crypto_prims.poseidon2_commit(payload, tag), dg)
    m = re.search(r"\(L = 0,\s+no chunk\):\s+`(poseidon2:[0-9a-f]{64})`", sec)
    if not m:
        bad.append("Poseidon2 empty-input example not found")
    else:
        expect("Poseidon2 empty input", crypto_prims.poseidon2_commit(b""), m.group(1))
    # round constants as documented (the first and the last)
    keys = crypto_prims.poseidon2_round_constants()
    m = re.search(r"first is `RC\[0\]\[0\]` =\s+`0x([0-9a-f]{64})` and the\s+last `RC\[55\]\[1\]` =\s+`0x([0-9a-f]{64})`", sec)
    if not m:
        bad.append("Poseidon2 round constants not found")
    else:
        expect("Poseidon2 RC[0][0]", "%064x" % keys[0][0], m.group(1))
        expect("Poseidon2 RC[55][1]", "%064x" % keys[55][1], m.group(2))
    m = re.search(r'h₀ = Keccak256\("([^"]+)"\)', sec)
    expect("Poseidon2 seed", m and m.group(1), crypto_prims.P2_SEED)
    # condition commitments (salt 1) and quantised scores
    cc = text[text.index("### Condition commitments"):text.index("### Condition records of a decomposition")]
    m = re.search(r"threshold_check, value (\d+):\ne0 = ([0-9a-f]{64})\ne1 = ([0-9a-f]{64})\ne2 = ([0-9a-f]{64})\ndigest: (poseidon2:[0-9a-f]{64})", cc)
    if not m:
        bad.append("condition commitment example not found")
    else:
        expect("condition e0", int(m.group(2), 16), int.from_bytes(b"svc/zk/threshold_check/v1", "big"))
        expect("condition e1", int(m.group(3), 16), int(m.group(1)))
        expect("condition e2", int(m.group(4), 16), 1)
        expect("condition threshold_check digest", crypto_prims.condition_commit("threshold_check", int(m.group(1)), 1), m.group(5))
    for circ, value, e0, dg in re.findall(r"^(truncation_check|below_threshold_check), value (\d+) \(e0 = …?([0-9a-f]+)\):\ndigest: (poseidon2:[0-9a-f]{64})", cc, re.M):
        expect("condition %s domain" % circ, ("%064x" % int.from_bytes(("svc/zk/%s/v1" % circ).encode(), "big")).endswith(e0), True)
        expect("condition %s digest" % circ, crypto_prims.condition_commit(circ, int(value), 1), dg)
    qs = re.findall(r"Q\(([0-9.]+)\) =\s+(\d+)", cc)
    if len(qs) != 3:
        bad.append("quantised score examples: want 3, found %d" % len(qs))
    for p, q in qs:
        expect("Q(%s)" % p, crypto_prims.quantize_probability(float(p)), int(q))
    # selective disclosure table
    sd = text[text.index("### Selective disclosure: worked example"):]
    rows = re.findall(r"^\| `(\w+)` \| `([A-Za-z0-9_-]+)` \| `(\[.*?\])` \| `(sha256:[0-9a-f]{64})` \|", sd, re.M)
    if len(rows) != 4:
        bad.append("selective example: want 4 rows, found %d" % len(rows))
    inp = sjson.loads(re.search(r"```json\n(\{\"document_type\".*?)\n```", sd).group(1))
    digests = []
    for k, (name, salt, arr, dg) in enumerate(rows):
        expect("selective salt " + name, decode_salt(salt), bytes(range(16 * k, 16 * k + 16)))
        expect("selective JCS " + name, sjson.jcs_text([salt, name, inp[name]]), arr)
        expect("selective digest " + name, sha256_commit(sjson.jcs([salt, name, inp[name]])), dg)
        digests.append(dg)
    m = re.search(r"`field_digests` \(sorted\):\s+```json\n(.*?)```", sd, re.S)
    expect("field_digests", sjson.loads(m.group(1)), sorted(digests))
    m = re.search(r"`commitment_hash` is `sha256:` of those\s+two bytes\s+\(`(sha256:[0-9a-f]{64})`\)", text)
    expect("empty selective commitment", m and m.group(1), sha256_commit(sjson.jcs([])))
    m = re.search(r"that array's JCS.*?=\s+`(sha256:[0-9a-f]{64})`", sd, re.S)
    expect("selective commitment_hash", sha256_commit(sjson.jcs(sorted(digests))), m.group(1))
    # Share examples
    for c, t, v in re.findall(r"Share\((\d+), (\d+)\) = (?:floor\(\d+ / \d+\) /\s+10000 = \d+ / 10000 = )?`([0-9.]+)`", text):
        expect("Share(%s, %s)" % (c, t), sjson.es_number(share(int(c), int(t))), v)
    # clean.json worked example
    ce = text[text.index("## Worked example: clean.json"):]
    run_id = re.search(r"`run_id` is `([^`]+)`", ce).group(1)
    gen = re.search(r"SHA-256\(`svc\.chain\.v1:[^`]+`\) =\s+`([0-9a-f]{64})`", ce).group(1)
    expect("genesis", hashlib.sha256(("svc.chain.v1:" + run_id).encode()).hexdigest(), gen)
    m = re.search(r"Merkle leaf 0 = SHA-256\(0x00 ‖ that 71-character string\) =\s+`([0-9a-f]{64})`", ce)
    c0 = re.search(r"Its `commitment_hash`,\s+`(sha256:[0-9a-f]{64})`", ce).group(1)
    expect("Merkle leaf 0", hashlib.sha256(b"\x00" + c0.encode()).hexdigest(), m.group(1))
    spki = re.search(r"SPKI `([0-9a-f]{88})`", ce).group(1)
    kid = re.search(r"`signing_key_id` `([0-9a-f]{16})`", ce).group(1)
    expect("key id", key_id(bytes.fromhex(spki)), kid)
    rec1 = re.search(r"```\n  (\{\"check\":\"pii_detection\".*?\})\n  ```", ce).group(1)
    expect("record 1 JCS is JCS", sjson.jcs_text(sjson.loads(rec1)), rec1)
    if vectors:
        d = sjson.loads(open(os.path.join(vectors, "vpec/valid/clean.json"), encoding="utf-8").read())
        r0 = {k: v for k, v in d["records"][0].items() if k != "chain_hash"}
        expect("record 1 JCS (vector)", sjson.jcs_text(r0), rec1)
        expect("record 1 chain_hash", d["records"][0]["chain_hash"],
               sha256_commit(bytes.fromhex(gen) + rec1.encode()))
        root = re.search(r"`merkle_root` =\s+`(sha256:[0-9a-f]{64})`", ce).group(1)
        expect("merkle_root", "sha256:" + merkle([r["commitment_hash"].encode() for r in d["records"]]).hex(), root)
        expect("merkle_root (vector)", d["merkle_root"], root)
        expect("clean signing_key_id", d["signing_key_id"], kid)
        signed = sjson.jcs_text({k: v for k, v in d.items() if k not in ("signature", "timestamp_rfc3161")})
        b = re.search(r"they begin\s+`([^`]*?)…`", ce).group(1)
        e = re.search(r"and end `…([^`]*)`", ce).group(1)
        expect("signed bytes begin", signed[:len(b)], b)
        expect("signed bytes end", signed[-len(e):], e)
    return bad, done


# ------------------------------------------------------------------ command line

def log_inputs(receipt=None, policy=None, newer=None, proof=None, require_log=False):
    """Reads the transparency log files (paths or None). A --witness-policy
    that does not parse raises ValueError (trust material unusable, exit 3),
    with or without a receipt."""
    def rd(p):
        return open(p, "rb").read() if p else None
    return {"receipt": rd(receipt), "policy": trustroot.parse_policy(rd(policy).decode()) if policy else None,
            "newer": rd(newer),
            "proof": rd(proof), "require_log": require_log}


def batch_job(job):
    """Runs one verify-batch job; returns its report (verdict, exit, checks)."""
    try:
        trust = Trust(job["trust_root"])
        trust.update(job.get("trust_root_updates") or [])
    except trustroot.Refused as e:
        return {"file": job["file"], "verdict": "UNVERIFIED: trust root update refused (%s): %s" % (e.code, e.msg),
                "exit": 3, "checks": [], "refusal": e.code}
    except (OSError, ValueError, KeyError) as e:
        return {"file": job["file"], "verdict": "UNVERIFIED: %s" % e, "exit": 3, "checks": []}
    data = read_input(job["file"])
    if job.get("kind") == "profile":
        try:
            verify_profile(data, trust)
        except Fail as f:
            return {"file": job["file"], "verdict": "INVALID \u2014 " + f.code, "exit": 1, "checks": [],
                    "message": f.msg}
        return {"file": job["file"], "verdict": "VALID", "exit": 0, "checks": []}
    profiles = [(p, open(p, "rb").read()) for p in job.get("profiles") or []]
    try:
        log = log_inputs(job.get("receipt"), job.get("witness_policy"), job.get("log_checkpoint"),
                         job.get("consistency_proof"), bool(job.get("require_log")))
    except (UnicodeDecodeError, ValueError) as e:
        return {"file": job["file"], "verdict": "UNVERIFIED: %s" % e, "exit": 3, "checks": []}
    circuits = [(p, open(p, "rb").read()) for p in job.get("circuits") or []]
    rep, verdict, code = verify(data, trust, profiles, bool(job.get("tsa_openssl")), log, circuits)
    return {"file": job["file"], "verdict": verdict, "exit": code, "checks": [rep.checks[c] for c in CHECKS]}


def main(argv):
    args = list(argv)
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    cmd = args.pop(0)
    opts = {"profiles": [], "json": False, "openssl": False, "trust": None, "alg": "sha256", "vectors": None,
            "data": None, "digest": None, "roots": [], "untrusted": [], "updates": [], "receipt": None,
            "require_log": False, "witness_policy": None, "log_checkpoint": None, "consistency_proof": None}
    pos = []
    while args:
        a = args.pop(0)
        if a == "--trust-root":
            opts["trust"] = args.pop(0)
        elif a == "--profile":
            opts["profiles"].append(args.pop(0))
        elif a == "--json":
            opts["json"] = True
        elif a == "--tsa-openssl":
            opts["openssl"] = True
        elif a == "--algorithm":
            opts["alg"] = args.pop(0)
        elif a == "--vectors":
            opts["vectors"] = args.pop(0)
        elif a in ("--data", "--digest"):
            opts[a[2:]] = args.pop(0)
        elif a == "--root":
            opts["roots"].append(args.pop(0))
        elif a == "--untrusted":
            opts["untrusted"].append(args.pop(0))
        elif a == "--trust-root-update":
            opts["updates"].append(args.pop(0))
        elif a == "--require-log":
            opts["require_log"] = True
        elif a in ("--receipt", "--witness-policy", "--log-checkpoint", "--consistency-proof"):
            opts[a[2:].replace("-", "_")] = args.pop(0)
        else:
            pos.append(a)
    if cmd == "hash" and len(pos) == 1:
        b = open(pos[0], "rb").read()
        print(crypto_prims.poseidon2_commit(b) if opts["alg"] == "poseidon2" else sha256_commit(b))
        return 0
    if cmd == "worked-examples" and len(pos) == 1:
        bad, done = worked_examples(pos[0], opts["vectors"])
        for b in bad:
            print("FAIL " + b)
        print("worked examples: %d values compared, %s" % (len(done), "all reproduced" if not bad else "%d differ" % len(bad)))
        return 1 if bad else 0
    if cmd == "timestamp":
        # timestamp TOKEN (--data F | --digest F) --root PEM... [--untrusted PEM...]
        if len(pos) != 1 or not (opts["data"] or opts["digest"]) or not opts["roots"]:
            print(__doc__, file=sys.stderr)
            return 2
        try:
            t, leaf = tsa.verify(open(pos[0], "rb").read(),
                                 data=open(opts["data"], "rb").read() if opts["data"] else None,
                                 digest=open(opts["digest"], "rb").read() if opts["digest"] else None,
                                 anchors=[c for f in opts["roots"] for c in tsa.pem_certs(open(f).read())],
                                 extra=[c for f in opts["untrusted"] for c in tsa.pem_certs(open(f).read())])
        except tsa.TSAError as e:
            print("%s: %s" % (e.code, esc(e.msg)))
            return 1
        print("VALID %s" % datetime.datetime.fromtimestamp(t, datetime.timezone.utc).isoformat())
        return 0
    if cmd == "poseidon2-batch":
        # one base64 payload a line in; its poseidon2: commitment out
        for line in sys.stdin:
            print(crypto_prims.poseidon2_commit(base64.b64decode(line.strip())))
        return 0
    if cmd == "jcs-batch":
        # one base64 JSON text a line in; its RFC 8785 bytes (base64) or "error: ..." out
        for line in sys.stdin:
            try:
                v = sjson.loads(base64.b64decode(line.strip()).decode("utf-8"))
                print(base64.b64encode(sjson.jcs(v)).decode())
            except (sjson.JSONError, UnicodeDecodeError, ValueError) as e:
                print("error: %s" % str(e).replace("\n", " "))
        return 0
    if cmd == "verify-batch":
        for line in sys.stdin:
            if line.strip():
                print(json.dumps(batch_job(json.loads(line)), ensure_ascii=False), flush=True)
        return 0
    if cmd not in ("verify", "verify-profile") or len(pos) != 1 or not opts["trust"]:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        trust = Trust(opts["trust"])
        trust.update(opts["updates"])
    except trustroot.Refused as e:
        print("UNVERIFIED: trust root update refused (%s): %s" % (e.code, esc(e.msg)), file=sys.stderr)
        return 3
    except (OSError, ValueError, KeyError) as e:
        print("UNVERIFIED: %s" % e, file=sys.stderr)
        return 3
    data = read_input(pos[0])
    if cmd == "verify-profile":
        try:
            verify_profile(data, trust)
        except Fail as f:
            out = {"verdict": "INVALID \u2014 " + f.code, "message": f.msg}
            print(json.dumps(out, ensure_ascii=False) if opts["json"] else out["verdict"] + ": " + esc(f.msg))
            return 1
        print(json.dumps({"verdict": "VALID"}) if opts["json"] else "VALID")
        return 0
    profiles = [(p, open(p, "rb").read()) for p in opts["profiles"]]
    try:
        log = log_inputs(opts["receipt"], opts["witness_policy"], opts["log_checkpoint"], opts["consistency_proof"],
                         opts["require_log"])
    except (UnicodeDecodeError, ValueError) as e:
        print("UNVERIFIED: %s" % e, file=sys.stderr)
        return 3
    rep, verdict, code = verify(data, trust, profiles, opts["openssl"], log)
    if opts["json"]:
        print(json.dumps({"verdict": verdict, "valid": code == 0,
                          "checks": [rep.checks[c] for c in CHECKS]}, ensure_ascii=False))
    else:
        for c in CHECKS:
            ch = rep.checks[c]
            print("%-14s %-14s %s%s" % (c, ch["status"], (ch.get("code", "") + ": ") if "code" in ch else "",
                                         esc(ch["message"])))
            for line in ch.get("details") or []:
                print("    " + esc(line))
        print(verdict)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
