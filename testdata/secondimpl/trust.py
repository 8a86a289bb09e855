"""trust.py: svc trust roots (svc.trust-root/v1), validity windows, update
chaining, and transparency log receipts (svc.tlog.receipt/v1), written from
docs/KEYS.md, docs/TRANSPARENCY.md and docs/FORMATS.md alone, standard
library only (Ed25519 from crypto_prims)."""

import base64
import datetime
import hashlib
import re
import struct

import crypto_prims
import sjson

NS = 10**9
SPKI_PREFIX = bytes.fromhex("302a300506032b6570032100")
PURPOSES = ["vpec-signing", "profile-signing", "circuit-signing", "tsa-root", "log-checkpoint", "witness",
            "root-signing"]
TIME_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d*[1-9])?Z$")


class Refused(Exception):
    """A key, receipt or update refused: code (svc-verify's, or trustroot's
    for updates) and message."""

    def __init__(self, code, msg):
        super().__init__(msg)
        self.code, self.msg = code, msg


def parse_time(s, what):
    m = TIME_RE.match(s) if isinstance(s, str) else None
    if not m:
        raise ValueError("%s: %r is not an RFC 3339 UTC time (Go's RFC3339Nano)" % (what, s))
    t = datetime.datetime(*map(int, m.groups()[:6]), tzinfo=datetime.timezone.utc)
    return int(t.timestamp()) * NS + int((m.group(7) or ".")[1:].ljust(9, "0")[:9])


def fmt_time(ns):
    s = datetime.datetime.fromtimestamp(ns // NS, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    frac = ns % NS
    return s + ("." + ("%09d" % frac).rstrip("0") if frac else "") + "Z"


def key_id(spki):
    return hashlib.sha256(spki).hexdigest()[:16]


def b64(s, what):
    try:
        b = base64.b64decode(s, validate=True)
    except (ValueError, TypeError):
        raise ValueError("%s: not standard base64" % what) from None
    if base64.b64encode(b).decode() != s:
        raise ValueError("%s: base64 not canonical" % what)
    return b


def note_key_hash(name, alg_key):
    return hashlib.sha256(name.encode() + b"\n" + alg_key).digest()[:4]


def parse_vkey(vkey):
    """NAME+HASH+BASE64(alg||key) -> (name, hash bytes, alg, key)."""
    name, h, k = vkey.split("+", 2)
    raw = base64.b64decode(k)
    if len(raw) != 33 or note_key_hash(name, raw).hex() != h:
        raise ValueError("note verifier %r: bad key or hash" % vkey)
    return name, bytes.fromhex(h), raw[0], raw[1:]


class Entry:
    def __init__(self, o, i):
        f = "keys[%d]" % i
        self.key_id, self.purpose = o["key_id"], o["purpose"]
        if self.purpose not in PURPOSES:
            raise ValueError("%s.purpose: %r" % (f, self.purpose))
        self.public_key = self.cert = self.vkey = None
        if "public_key" in o:
            spki = b64(o["public_key"], f + ".public_key")
            if len(spki) != 44 or not spki.startswith(SPKI_PREFIX):
                raise ValueError("%s.public_key: not an Ed25519 SPKI" % f)
            if key_id(spki) != self.key_id:
                raise ValueError("%s.key_id: not the key id of public_key" % f)
            self.public_key = spki[12:]
        if "certificate" in o:
            self.cert = b64(o["certificate"], f + ".certificate")
        if "note_verifier" in o:
            self.vkey = parse_vkey(o["note_verifier"])
        self.since = parse_time(o["valid_from"], f + ".valid_from")
        self.until = parse_time(o["valid_until"], f + ".valid_until") if "valid_until" in o else None
        self.compromised = parse_time(o["compromised_at"], f + ".compromised_at") if "compromised_at" in o else None
        self.forever = False

    def window(self):
        if self.forever:
            return "valid forever (legacy PEM trust bundle: no validity window)"
        s = "valid from " + fmt_time(self.since)
        s += (" until " + fmt_time(self.until)) if self.until is not None else ", no end"
        if self.compromised is not None:
            s += ", compromised at " + fmt_time(self.compromised)
        return s


class Root:
    """A parsed trust root. version None: a PEM bundle read as valid forever."""

    def __init__(self, data=None):
        self.entries, self.version, self.threshold, self.issued_at, self.sigs, self.signed = [], None, 1, 0, [], b""
        if data is None:
            return
        v = sjson.loads(data.decode("utf-8"))
        if v.get("schema") != "svc.trust-root/v1":
            raise ValueError("schema: not svc.trust-root/v1")
        self.version = int(v["version"].raw)
        self.threshold = int(v["root_threshold"].raw)
        self.issued_at = parse_time(v["issued_at"], "issued_at")
        self.entries = [Entry(o, i) for i, o in enumerate(v["keys"])]
        self.signed = sjson.jcs({k: x for k, x in v.items() if k != "signatures"})
        self.sigs = [(s["key_id"], s["signature"]) for s in v.get("signatures") or []]
        for kid, sig in self.sigs:
            e = self.entry("root-signing", kid)
            if e is None or not sig.startswith("Ed25519:") or not crypto_prims.ed25519_verify(
                    e.public_key, self.signed, b64(sig[8:], "signature")):
                raise ValueError("signatures: the signature of %s does not verify (bad-signature)" % kid)

    @classmethod
    def from_bundle(cls, keys, cert_ders, logs=()):
        """A PEM bundle as a root: its keys for VPECs, profiles and circuit
        entries, its TRANSPARENCY LOG KEY blocks ((spki, note verifier)
        pairs) for log checkpoints, all valid forever."""
        r = cls()
        def add(kid, p, pub, vkey):
            e = Entry.__new__(Entry)
            e.key_id, e.purpose, e.public_key, e.cert, e.vkey = kid, p, pub, None, vkey
            e.since, e.until, e.compromised, e.forever = 0, None, None, True
            r.entries.append(e)
        for kid, pub in keys.items():
            for p in ("vpec-signing", "profile-signing", "circuit-signing"):
                add(kid, p, pub, None)
        for spki, vkey in logs:
            add(key_id(spki), "log-checkpoint", spki[12:], parse_vkey(vkey))
        return r

    def legacy(self):
        return self.version is None

    def entry(self, purpose, kid):
        for e in self.entries:
            if e.purpose == purpose and e.key_id == kid:
                return e
        return None

    def key_for(self, purpose, kid, at):
        """The entry of kid for purpose if a signature at `at` (ns) is in
        its window; else Refused with svc-verify's code suffix."""
        has = [e.purpose for e in self.entries if e.key_id == kid]
        e = self.entry(purpose, kid)
        if e is None:
            if not has:
                raise Refused("UNKNOWN", "key %s: key not in the trust root" % kid)
            raise Refused("WRONG PURPOSE", "key %s: not trusted for %s: it may sign %s" % (kid, purpose, ", ".join(has)))
        if e.forever:
            return e
        if e.compromised is not None and at >= e.compromised:
            raise Refused("COMPROMISED", "key %s (%s): signed at %s, compromised at %s (%s)" % (
                kid, purpose, fmt_time(at), fmt_time(e.compromised), e.window()))
        if at < e.since:
            raise Refused("NOT YET VALID", "key %s (%s): signed at %s, before %s (%s)" % (
                kid, purpose, fmt_time(at), fmt_time(e.since), e.window()))
        if e.until is not None and at >= e.until:
            raise Refused("EXPIRED", "key %s (%s): signed at %s, at or after its end %s (%s)" % (
                kid, purpose, fmt_time(at), fmt_time(e.until), e.window()))
        return e


def signers(keys_root, target, at):
    """Distinct root-signing keys of keys_root, valid at `at` and never
    compromised, whose signatures over target verify."""
    out = set()
    for kid, sig in target.sigs:
        e = keys_root.entry("root-signing", kid)
        if e is None or e.compromised is not None or at < e.since or (e.until is not None and at >= e.until):
            continue
        if crypto_prims.ed25519_verify(e.public_key, target.signed, base64.b64decode(sig[8:])):
            out.add(kid)
    return out


def verify_update(old, new):
    """docs/KEYS.md "Distribution and update chaining"; Refused with the
    trustroot code."""
    if new.version <= old.version:
        raise Refused("rollback", "version %d is not newer than %d" % (new.version, old.version))
    if new.version != old.version + 1:
        raise Refused("version-gap", "version %d after %d" % (new.version, old.version))
    if new.issued_at < old.issued_at:
        raise Refused("rollback", "issued_at earlier than the trusted root's")
    if len(signers(old, new, new.issued_at)) < old.threshold:
        raise Refused("not-signed-by-previous", "fewer than %d valid signatures by root keys of version %d"
                      % (old.threshold, old.version))
    if len(signers(new, new, new.issued_at)) < new.threshold:
        raise Refused("not-self-signed", "fewer than %d signatures by its own root keys" % new.threshold)
    for e in old.entries:
        n = new.entry(e.purpose, e.key_id)
        if (n is None or n.since != e.since or n.public_key != e.public_key or n.vkey != e.vkey
                or (e.until is not None and n.until != e.until)
                or (e.compromised is not None and (n.compromised is None or n.compromised > e.compromised))):
            raise Refused("history-rewritten", "key %s (%s) removed or changed" % (e.key_id, e.purpose))
    return new


# ------------------------------------------------------------------ the log

def leaf_hash(data):
    return hashlib.sha256(b"\x00" + data).digest()


def node(a, b):
    return hashlib.sha256(b"\x01" + a + b).digest()


def verify_inclusion(index, size, leaf, path, root):
    """RFC 9162 2.1.3.2."""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node(p, r)
            if not fn & 1:
                while fn & 1 == 0 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def verify_consistency(size1, size2, proof, root1, root2):
    """RFC 9162 2.1.4.2."""
    if size1 == size2:
        return not proof and root1 == root2
    if size1 == 0 or size1 > size2 or not proof:
        return False
    if size1 & (size1 - 1) == 0:  # a power of two: the old root starts the path
        proof = [root1] + list(proof)
    fn, sn = size1 - 1, size2 - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = proof[0]
    for c in proof[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr, sr = node(c, fr), node(c, sr)
            if not fn & 1:
                while fn & 1 == 0 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node(sr, c)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == root1 and sr == root2


LEAF_RE = re.compile(r"^svc\.tlog\.leaf/v1\nvpec_id (vpec_[A-Za-z0-9._:-]+)\nvpec_digest sha256:([0-9a-f]{64})\n"
                     r"issued_at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\norg_tag [0-9a-f]{64}\n"
                     r"workflow_tag [0-9a-f]{64}\nstate_tag [0-9a-f]{64}\n$")


def parse_note(text):
    """A signed note -> (body text, [(name, key hash 4 bytes, payload)])."""
    if "\n\n" not in text:
        raise Refused("RECEIPT MALFORMED", "checkpoint is not a signed note")
    body, sigs = text.split("\n\n", 1)
    body += "\n"
    out = []
    for line in sigs.split("\n")[:-1]:
        if not line.startswith("\u2014 "):
            raise Refused("RECEIPT MALFORMED", "checkpoint signature line %r" % line)
        name, blob = line[2:].rsplit(" ", 1)
        raw = base64.b64decode(blob)
        out.append((name, raw[:4], raw[4:]))
    if not sigs.endswith("\n"):
        raise Refused("RECEIPT MALFORMED", "checkpoint does not end in a line feed")
    return body, out


def open_checkpoint(text, log):
    """Checks a checkpoint against the log key (name, hash, alg, key);
    returns (origin, size, root, body, sigs)."""
    body, sigs = parse_note(text)
    lines = body.split("\n")
    if len(lines) != 4:
        raise Refused("RECEIPT MALFORMED", "checkpoint text has extension lines")
    origin, size, root = lines[0], int(lines[1]), base64.b64decode(lines[2])
    name, h, _, key = log
    if origin != name:
        raise Refused("CHECKPOINT FROM ANOTHER LOG", "its origin is %r, the trusted log's is %r" % (origin, name))
    signed = False
    for n, kh, payload in sigs:
        if n == name and kh == h:
            if not crypto_prims.ed25519_verify(key, body.encode(), payload):
                raise Refused("CHECKPOINT NOT SIGNED BY LOG KEY", "the log key's signature line does not verify")
            signed = True
    if not signed:
        raise Refused("CHECKPOINT NOT SIGNED BY LOG KEY", "no signature line by the log key %s" % name)
    return origin, size, root, body, sigs


def parse_policy(text):
    """The Sigsum policy format: witness/group/quorum lines -> (witnesses
    {component: vkey tuple}, groups {name: (k, members)}, quorum). Lines
    end in LF (a CR is white space), '#' starts a comment; exactly one
    quorum line; a group's threshold is any, all or 1..members; names are
    defined once, before use. Raises ValueError (trust material unusable)."""
    wit, groups, quorum = {}, {}, None
    for line in text.split("\n"):
        f = line.split("#", 1)[0].split()
        if not f:
            continue
        if f[0] == "witness":
            if len(f) not in (3, 4) or f[1] in wit or f[1] in groups or f[1] == "none":
                raise ValueError("witness policy: bad witness line %r" % line)
            wit[f[1]] = parse_vkey(f[2])
        elif f[0] == "group":
            members = f[3:] if len(f) >= 3 else []
            if len(f) < 4 or f[1] in wit or f[1] in groups or f[1] == "none" or len(set(members)) != len(members):
                raise ValueError("witness policy: bad group line %r" % line)
            if any(m not in wit and m not in groups for m in members):
                raise ValueError("witness policy: group %s names an undefined member" % f[1])
            k = len(members) if f[2] == "all" else (1 if f[2] == "any" else int(f[2]))
            if not 1 <= k <= len(members):
                raise ValueError("witness policy: group %s threshold %s of %d members" % (f[1], f[2], len(members)))
            groups[f[1]] = (k, members)
        elif f[0] == "quorum":
            if quorum is not None or len(f) != 2:
                raise ValueError("witness policy: exactly one quorum line, naming one component or none")
            if f[1] != "none" and f[1] not in wit and f[1] not in groups:
                raise ValueError("witness policy: quorum %s is undefined" % f[1])
            quorum = f[1]
        elif f[0] != "log":
            raise ValueError("witness policy: unknown line %r" % line)
    if quorum is None:
        raise ValueError("witness policy: no quorum line")
    return wit, groups, quorum


def root_policy(root):
    ws = [e for e in root.entries if e.purpose == "witness" and e.vkey]
    if not ws:
        return {}, {}, "none"
    wit = {"w%d" % i: e.vkey for i, e in enumerate(ws)}
    return wit, {"all": (len(wit), list(wit))}, "all"


def check_cosignatures(body, sigs, policy, root=None):
    """The cosignatures that count toward the policy ({component: time in
    ns}); Refused if they do not satisfy it. A cosignature by a witness key
    the trust root lists counts only if its time is in the key's window
    (KEYS.md, "Which time a window is checked against"); a witness only the
    policy file names has no window."""
    wit, groups, quorum = policy
    ok = {}
    refused = []
    for comp, (name, h, alg, key) in wit.items():
        for n, kh, payload in sigs:
            if n != name or kh != h:
                continue
            if len(payload) != 72:
                raise Refused("COSIGNATURE FORGED", "witness %s: cosignature of %d bytes" % (name, len(payload)))
            t = struct.unpack(">Q", payload[:8])[0]
            msg = ("cosignature/v1\ntime %d\n" % t).encode() + body.encode()
            if not crypto_prims.ed25519_verify(key, msg, payload[8:]):
                raise Refused("COSIGNATURE FORGED", "witness %s: its cosignature does not verify" % name)
            entry = None
            if root is not None and not root.legacy():
                entry = next((e for e in root.entries if e.purpose == "witness" and e.vkey
                              and e.vkey[0] == name and e.vkey[1] == h), None)
            if entry is not None:
                try:
                    root.key_for("witness", entry.key_id, t * NS)
                except Refused as r:
                    refused.append(r)
                    continue
            ok[comp] = t * NS

    def sat(c):
        if c in wit:
            return c in ok
        k, members = groups[c]
        return sum(sat(m) for m in members) >= k

    if quorum != "none" and not sat(quorum):
        if refused:
            raise Refused("WITNESS KEY " + refused[0].code, "the cosignatures do not satisfy the quorum %s: "
                          "a witness's cosignature does not count: %s" % (quorum, refused[0].msg))
        raise Refused("WITNESS POLICY NOT SATISFIED", "the cosignatures do not satisfy the quorum %s" % quorum)
    return ok


def check_receipt(data, vpec_id, digest, root, policy, newer=None, proof=None):
    """The transparency check (docs/TRANSPARENCY.md, "Verifying a
    receipt"): returns the message, or raises Refused."""
    logs = [e for e in root.entries if e.purpose == "log-checkpoint" and e.vkey]
    if not logs:
        raise Refused("LOG KEY MISSING", "the trust root lists no log-checkpoint key")
    try:
        v = sjson.loads(data.decode("utf-8"))
        if sjson.jcs(v) != data or v.get("schema") != "svc.tlog.receipt/v1" or set(v) != {
                "schema", "log_index", "leaf", "inclusion_proof", "checkpoint"}:
            raise ValueError("not the one encoding of a v1 receipt")
        index = int(v["log_index"].raw)
        leaf, cp = v["leaf"], v["checkpoint"]
        path = [b64(h, "inclusion_proof") for h in v["inclusion_proof"]]
    except (ValueError, KeyError, AttributeError, TypeError, UnicodeDecodeError, sjson.JSONError) as e:
        raise Refused("RECEIPT MALFORMED", "receipt: %s" % e) from None
    m = LEAF_RE.match(leaf)
    if not m:
        raise Refused("RECEIPT MALFORMED", "leaf is not a v1 leaf")
    sig_lines = cp.split("\n\n", 1)[1].split("\n")[:-1] if "\n\n" in cp else []
    if any(a >= b for a, b in zip(sig_lines, sig_lines[1:])):
        raise Refused("RECEIPT MALFORMED", "the checkpoint's signature lines are not in ascending byte order")
    if m.group(1) != vpec_id or m.group(2) != digest.hex():
        raise Refused("RECEIPT FOR ANOTHER VPEC", "the leaf records %s sha256:%s" % (m.group(1), m.group(2)))
    best = None
    for e in logs:
        try:
            origin, size, r, body, sigs = open_checkpoint(cp, e.vkey)
            if index >= size:
                raise Refused("CHECKPOINT TOO OLD", "index %d, checkpoint of %d entries" % (index, size))
            if not verify_inclusion(index, size, leaf_hash(leaf.encode()), path, r):
                raise Refused("INCLUSION PROOF INVALID", "from index %d to the root of %d entries" % (index, size))
            cosigned = check_cosignatures(body, sigs, policy, root)
        except Refused as f:
            if best is None or f.code != "CHECKPOINT FROM ANOTHER LOG":
                best = f
            continue
        msg = "in the log %s at index %d of %d" % (origin, index, size)
        if newer is not None:
            try:
                _, size2, r2, body2, sigs2 = open_checkpoint(newer, e.vkey)
                check_cosignatures(body2, sigs2, policy, root)
            except Refused as f:
                raise Refused("NEWER CHECKPOINT INVALID", f.msg) from None
            if size2 < size:
                raise Refused("CHECKPOINT NEWER THAN GIVEN", "the checkpoint given has %d entries, the receipt's %d"
                              % (size2, size))
            if not verify_consistency(size, size2, proof or [], r, r2):
                raise Refused("CHECKPOINT INCONSISTENT", "not a prefix of the newer checkpoint (%d entries)" % size2)
            msg += "; a prefix of the newer checkpoint (%d entries)" % size2
        return msg, e, max(cosigned.values(), default=None)
    raise best
