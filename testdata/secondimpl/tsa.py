"""RFC 3161 token verification in pure Python (RFC 3161, RFC 5652, RFC 5280, RFC 5035).

Written from docs/FORMATS.md "Signature and timestamp": the CMS signature
over the signed attributes as received, the ESS signing-certificate
attribute, the TSA certificate's usage rules, and a chain to any trusted
certificate at genTime. ECDSA (P-256, P-384, P-521), RSA PKCS #1 v1.5 and
Ed25519 signatures; SHA-256/384/512 only. Name constraints are not
evaluated (see docs/INTEROP.md).
"""

import datetime
import hashlib

import crypto_prims
import der

UNTRUSTED = "UNTRUSTED TIMESTAMP AUTHORITY"
INVALID = "TIMESTAMP INVALID"
NOT_OVER = "TIMESTAMP NOT OVER SIGNATURE"


class TSAError(Exception):
    def __init__(self, code, msg):
        super().__init__(msg)
        self.code = code
        self.msg = msg


HASHES = {"2.16.840.1.101.3.4.2.1": "sha256", "2.16.840.1.101.3.4.2.2": "sha384", "2.16.840.1.101.3.4.2.3": "sha512"}
SIG_HASH = {"1.2.840.10045.4.3.2": "sha256", "1.2.840.10045.4.3.3": "sha384", "1.2.840.10045.4.3.4": "sha512",
            "1.2.840.113549.1.1.11": "sha256", "1.2.840.113549.1.1.12": "sha384", "1.2.840.113549.1.1.13": "sha512"}
OID_RSA = "1.2.840.113549.1.1.1"
OID_EC = "1.2.840.10045.2.1"
OID_ED25519 = "1.3.101.112"
OID_CONTENT_TYPE = "1.2.840.113549.1.9.3"
OID_MESSAGE_DIGEST = "1.2.840.113549.1.9.4"
OID_SIGNING_CERT = "1.2.840.113549.1.9.16.2.12"
OID_SIGNING_CERT_V2 = "1.2.840.113549.1.9.16.2.47"
OID_EKU, OID_KU, OID_BC, OID_SKI = "2.5.29.37", "2.5.29.15", "2.5.29.19", "2.5.29.14"
OID_TIMESTAMPING = "1.3.6.1.5.5.7.3.8"
DIGEST_INFO = {  # RFC 8017 section 9.2, note 1
    "sha256": bytes.fromhex("3031300d060960864801650304020105000420"),
    "sha384": bytes.fromhex("3041300d060960864801650304020205000430"),
    "sha512": bytes.fromhex("3051300d060960864801650304020305000440"),
}

# ------------------------------------------------------------------ ECDSA

CURVES = {
    "1.2.840.10045.3.1.7": dict(  # P-256
        p=2**256 - 2**224 + 2**192 + 2**96 - 1, a=-3,
        n=0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551,
        gx=0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
        gy=0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5),
    "1.3.132.0.34": dict(  # P-384
        p=2**384 - 2**128 - 2**96 + 2**32 - 1, a=-3,
        n=0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC7634D81F4372DDF581A0DB248B0A77AECEC196ACCC52973,
        gx=0xAA87CA22BE8B05378EB1C71EF320AD746E1D3B628BA79B9859F741E082542A385502F25DBF55296C3A545E3872760AB7,
        gy=0x3617DE4A96262C6F5D9E98BF9292DC29F8F41DBD289A147CE9DA3113B5F0B8C00A60B1CE1D7E819D7A431D7C90EA0E5F),
    "1.3.132.0.35": dict(  # P-521
        p=2**521 - 1, a=-3,
        n=0x01FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFA51868783BF2F966B7FCC0148F709A5D03BB5C9B8899C47AEBB6FB71E91386409,
        gx=0x00C6858E06B70404E9CD9E3ECB662395B4429C648139053FB521F828AF606B4D3DBAA14B5E77EFE75928FE1DC127A2FFA8DE3348B3C1856A429BF97E7E31C2E5BD66,
        gy=0x011839296A789A3BC0045C8A5FB42C7D1BD998F54449579B446817AFBD17273E662C97EE72995EF42640C550B9013FAD0761353C7086A272C24088BE94769FD16650),
}


def _ec_add(c, P, Q):
    if P is None:
        return Q
    if Q is None:
        return P
    p = c["p"]
    if P[0] == Q[0]:
        if (P[1] + Q[1]) % p == 0:
            return None
        lam = (3 * P[0] * P[0] + c["a"]) * pow(2 * P[1], -1, p) % p
    else:
        lam = (Q[1] - P[1]) * pow(Q[0] - P[0], -1, p) % p
    x = (lam * lam - P[0] - Q[0]) % p
    return (x, (lam * (P[0] - x) - P[1]) % p)


def _ec_mul(c, k, P):
    R = None
    while k:
        if k & 1:
            R = _ec_add(c, R, P)
        P = _ec_add(c, P, P)
        k >>= 1
    return R


def ecdsa_verify(curve_oid, point, digest, sig_der):
    c = CURVES.get(curve_oid)
    if c is None:
        return False
    p, n = c["p"], c["n"]
    size = (p.bit_length() + 7) // 8
    if len(point) != 1 + 2 * size or point[0] != 4:
        return False
    Q = (int.from_bytes(point[1:1 + size], "big"), int.from_bytes(point[1 + size:], "big"))
    if (Q[1] ** 2 - Q[0] ** 3 - c["a"] * Q[0]) % p != (_curve_b(c)) % p:
        return False
    try:  # a damaged signature is a signature that does not verify
        t, s, e = der.read_tlv(sig_der, 0)
        if t != 0x30 or e != len(sig_der):
            return False
        rs = der.children(sig_der, s, e)
    except der.DERError:
        return False
    if len(rs) != 2 or any(x[0] != 0x02 for x in rs):
        return False
    r, sv = (int.from_bytes(sig_der[a:b], "big") for _, a, b in rs)
    if not (0 < r < n and 0 < sv < n):
        return False
    z = int.from_bytes(digest, "big")
    if len(digest) * 8 > n.bit_length():
        z >>= len(digest) * 8 - n.bit_length()
    w = pow(sv, -1, n)
    X = _ec_add(c, _ec_mul(c, z * w % n, (c["gx"], c["gy"])), _ec_mul(c, r * w % n, Q))
    return X is not None and X[0] % n == r


def _on_curve(curve_oid, point):
    c = CURVES[curve_oid]
    p = c["p"]
    size = (p.bit_length() + 7) // 8
    if len(point) != 1 + 2 * size or point[0] != 4:
        return False
    x, y = int.from_bytes(point[1:1 + size], "big"), int.from_bytes(point[1 + size:], "big")
    return x < p and y < p and (y * y - x ** 3 - c["a"] * x - _curve_b(c)) % p == 0


def _curve_b(c):
    # b from the generator: y^2 = x^3 + a x + b
    return (c["gy"] ** 2 - c["gx"] ** 3 - c["a"] * c["gx"]) % c["p"]


def rsa_verify(n, e, hname, digest, sig):
    k = (n.bit_length() + 7) // 8
    if len(sig) != k:
        return False
    m = pow(int.from_bytes(sig, "big"), e, n).to_bytes(k, "big")
    t = DIGEST_INFO[hname] + digest
    want = b"\x00\x01" + b"\xff" * (k - len(t) - 3) + b"\x00" + t
    return m == want


# ------------------------------------------------------------------ certificates

def _time(b, t, s, e):
    v = b[s:e].decode("ascii")
    if t == 0x17:
        dt = datetime.datetime.strptime(v, "%y%m%d%H%M%SZ")
        if dt.year >= 2050:
            dt = dt.replace(year=dt.year - 100)
    elif t == 0x18:
        dt = datetime.datetime.strptime(v, "%Y%m%d%H%M%SZ")
    else:
        raise der.DERError("bad time")
    return dt.replace(tzinfo=datetime.timezone.utc).timestamp()


def _need(cond, what):
    if not cond:
        raise der.DERError("malformed certificate: " + what)


def _name(raw, tlv):
    """Checks an X.501 Name: SEQUENCE OF SET OF SEQUENCE {OID, value}."""
    _need(tlv[0] == 0x30, "a name is not a SEQUENCE")
    for rdn in der.children(raw, tlv[1], tlv[2]):
        _need(rdn[0] == 0x31, "an RDN is not a SET")
        for atv in der.children(raw, rdn[1], rdn[2]):
            _need(atv[0] == 0x30, "an attribute is not a SEQUENCE")
            kv = der.children(raw, atv[1], atv[2])
            _need(len(kv) == 2 and kv[0][0] == 0x06, "an attribute is not {type, value}")
            der.oid(raw, *kv[0][1:])
            _string(raw, kv[1])
    return raw[_start(raw, tlv):tlv[2]]


_PRINTABLE = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 '()+,-./:=?*&")


def _string(raw, tlv):
    """An attribute value: one of the string types X.509 names use, well-formed."""
    t, s, e = tlv
    v = raw[s:e]
    if t == 0x13:  # PrintableString
        _need(all(c in _PRINTABLE for c in v), "invalid PrintableString")
    elif t == 0x0C:  # UTF8String
        try:
            v.decode("utf-8")
        except UnicodeDecodeError:
            raise der.DERError("malformed certificate: invalid UTF8String") from None
    elif t == 0x16:  # IA5String
        _need(all(c < 0x80 for c in v), "invalid IA5String")
    elif t == 0x12:  # NumericString
        _need(all(c in b"0123456789 " for c in v), "invalid NumericString")
    elif t == 0x1E:  # BMPString
        _need(len(v) % 2 == 0, "invalid BMPString")
    else:
        _need(t == 0x14, "unsupported string type 0x%02x" % t)  # T61String


def _seq_of(v, tag, item_tags, what):
    t, s, e = der.read_tlv(v, 0)
    _need(t == tag and e == len(v), "invalid " + what)
    items = der.children(v, s, e)
    _need(all(x[0] in item_tags for x in items), "invalid " + what)
    return items


def _check_extension(oid_, v):
    """The content of the extensions X.509 parsers read (RFC 5280 4.2.1)."""
    if oid_ == OID_EKU:
        for _, s, e in _seq_of(v, 0x30, (0x06,), "extended key usage"):
            der.oid(v, s, e)
    elif oid_ == OID_KU:
        t, s, e = der.read_tlv(v, 0)
        _need(t == 0x03 and e == len(v) and e > s and v[s] < 8, "invalid key usage")
    elif oid_ == OID_BC:
        items = _seq_of(v, 0x30, (0x01, 0x02), "basic constraints")
        _need([x[0] for x in items] in ([], [0x01], [0x02], [0x01, 0x02]), "invalid basic constraints")
    elif oid_ == OID_SKI:
        t, s, e = der.read_tlv(v, 0)
        _need(t == 0x04 and e == len(v), "invalid subject key identifier")
    elif oid_ == "2.5.29.35":  # authority key identifier
        items = _seq_of(v, 0x30, (0x80, 0xA1, 0x82), "authority key identifier")
        nums = [x[0] & 0x1F for x in items]
        _need(nums == sorted(set(nums)), "invalid authority key identifier")
    elif oid_ == "2.5.29.32":  # certificate policies
        for _, s, e in _seq_of(v, 0x30, (0x30,), "certificate policies"):
            k = der.children(v, s, e)
            _need(1 <= len(k) <= 2 and k[0][0] == 0x06 and (len(k) == 1 or k[1][0] == 0x30),
                  "invalid certificate policies")
            der.oid(v, *k[0][1:])
    elif oid_ == "2.5.29.17":  # subject alternative name
        _need(all(0x80 <= x[0] <= 0xA8 for x in _seq_of(v, 0x30, range(0x80, 0xA9), "subject alternative name")),
              "invalid subject alternative name")


def _alg(raw, tlv):
    _need(tlv[0] == 0x30, "an AlgorithmIdentifier is not a SEQUENCE")
    k = der.children(raw, tlv[1], tlv[2])
    _need(1 <= len(k) <= 2 and k[0][0] == 0x06, "a bad AlgorithmIdentifier")
    return der.oid(raw, *k[0][1:]), raw[_start(raw, tlv):tlv[2]]


class Cert:
    """An X.509 certificate, parsed strictly enough that a damaged one is refused."""

    def __init__(self, raw):
        self.raw = raw
        t, s, e = der.read_tlv(raw, 0)
        _need(t == 0x30 and e == len(raw), "not one SEQUENCE")
        top = der.children(raw, s, e)
        _need(len(top) == 3, "not {tbsCertificate, signatureAlgorithm, signature}")
        tbs, alg, sig = top
        _need(tbs[0] == 0x30 and sig[0] == 0x03 and raw[sig[1]] == 0, "bad tbsCertificate or signature")
        self.tbs = raw[_start(raw, tbs):tbs[2]]
        self.sig_alg, outer = _alg(raw, alg)
        self.signature = raw[sig[1] + 1:sig[2]]  # BIT STRING, 0 unused bits
        f = der.children(raw, tbs[1], tbs[2])
        i = 0
        if f[0][0] == 0xA0:
            v = der.children(raw, f[0][1], f[0][2])
            _need(len(v) == 1 and v[0][0] == 0x02, "bad version")
            i = 1
        _need(len(f) >= i + 6 and f[i][0] == 0x02, "bad serial number")
        self.serial = raw[f[i][1]:f[i][2]]
        _need(_alg(raw, f[i + 1])[1] == outer, "inner and outer signature algorithms differ")
        self.issuer = _name(raw, f[i + 2])
        _need(f[i + 3][0] == 0x30, "bad validity")
        v = der.children(raw, f[i + 3][1], f[i + 3][2])
        _need(len(v) == 2, "bad validity")
        self.not_before = _time(raw, *v[0])
        self.not_after = _time(raw, *v[1])
        self.subject = _name(raw, f[i + 4])
        _need(f[i + 5][0] == 0x30, "bad subjectPublicKeyInfo")
        spki = der.children(raw, f[i + 5][1], f[i + 5][2])
        _need(len(spki) == 2 and spki[0][0] == 0x30 and spki[1][0] == 0x03 and raw[spki[1][1]] == 0,
              "bad subjectPublicKeyInfo")
        ka = der.children(raw, spki[0][1], spki[0][2])
        _need(ka and ka[0][0] == 0x06, "bad key algorithm")
        self.key_alg = der.oid(raw, *ka[0][1:])
        self.curve = None
        self.key = raw[spki[1][1] + 1:spki[1][2]]
        if self.key_alg == OID_EC:
            _need(len(ka) == 2 and ka[1][0] == 0x06, "an EC key without a named curve")
            self.curve = der.oid(raw, *ka[1][1:])
            _need(self.curve in CURVES and _on_curve(self.curve, self.key), "an EC key not on its curve")
        elif self.key_alg == OID_RSA:
            t3, s3, e3 = der.read_tlv(self.key, 0)
            ne = der.children(self.key, s3, e3)
            _need(t3 == 0x30 and e3 == len(self.key) and len(ne) == 2 and ne[0][0] == ne[1][0] == 0x02,
                  "bad RSA key")
            _need(self.key[ne[0][1]] < 0x80 and self.key[ne[1][1]] < 0x80, "a negative RSA modulus or exponent")
        self.ext = {}
        prev = 0
        for t2, s2, e2 in f[i + 6:]:
            _need(t2 in (0x81, 0x82, 0xA3) and t2 > prev, "unexpected tbsCertificate member")
            prev = t2
            if t2 == 0xA3:
                seqs = der.children(raw, s2, e2)
                _need(len(seqs) == 1 and seqs[0][0] == 0x30, "bad extensions")
                for t4, xs, xe in der.children(raw, seqs[0][1], seqs[0][2]):
                    x = der.children(raw, xs, xe)
                    _need(t4 == 0x30 and len(x) in (2, 3) and x[0][0] == 0x06 and x[-1][0] == 0x04,
                          "bad extension")
                    if len(x) == 3:
                        _need(x[1][0] == 0x01 and x[1][2] - x[1][1] == 1 and raw[x[1][1]] in (0, 0xFF),
                              "bad critical flag")
                    crit = len(x) == 3 and raw[x[1][1]] == 0xFF
                    name = der.oid(raw, *x[0][1:])
                    _need(name not in self.ext, "an extension twice")
                    self.ext[name] = (crit, raw[x[-1][1]:x[-1][2]])
        for oid_, (_, v) in self.ext.items():
            _check_extension(oid_, v)

    def is_ca(self):
        bc = self.ext.get(OID_BC)
        if not bc:
            return False
        kids = der.children(bc[1], 0, len(bc[1]))
        inner = der.children(bc[1], kids[0][1], kids[0][2])
        return bool(inner) and inner[0][0] == 0x01 and bc[1][inner[0][1]] != 0

    def verify(self, msg, hname, sig, sig_oid=None):
        """Verifies sig over msg with this certificate's key."""
        if self.key_alg == OID_EC:
            return ecdsa_verify(self.curve, self.key, hashlib.new(hname, msg).digest(), sig)
        if self.key_alg == OID_RSA:
            t, s, e = der.read_tlv(self.key, 0)
            ne = der.children(self.key, s, e)
            n = int.from_bytes(self.key[ne[0][1]:ne[0][2]], "big")
            ex = int.from_bytes(self.key[ne[1][1]:ne[1][2]], "big")
            return rsa_verify(n, ex, hname, hashlib.new(hname, msg).digest(), sig)
        if self.key_alg == OID_ED25519:
            return crypto_prims.ed25519_verify(self.key, msg, sig)
        return False


def _start(b, tlv):
    """The offset of an element's tag, from its (tag, content_start, end)."""
    _, s, _ = tlv
    # walk back over the length bytes: the header is 2 bytes, or 2 + n for a long form
    for h in range(2, 7):
        i = s - h
        if i >= 0 and b[i] == tlv[0]:
            try:
                t, s2, e2 = der.read_tlv(b, i)
            except der.DERError:
                continue
            if s2 == s and e2 == tlv[2]:
                return i
    raise der.DERError("cannot locate element")


def pem_certs(text):
    import base64
    import re
    return [base64.b64decode("".join(m.group(1).split()))
            for m in re.finditer(r"-----BEGIN CERTIFICATE-----(.*?)-----END CERTIFICATE-----", text, re.S)]


# ------------------------------------------------------------------ the token

def verify(raw, data=None, digest=None, anchors=(), extra=()):
    """Verifies a DER TimeStampResp or TimeStampToken over data (or a digest).

    anchors: trusted certificates (DER); extra: untrusted certificates that
    may help build the chain. Returns (genTime seconds, TSA certificate).
    Raises TSAError with svc-verify's failure code.
    """
    try:
        return _verify(raw, data, digest, anchors, extra)
    except (der.DERError, IndexError, ValueError, KeyError) as e:
        raise TSAError(INVALID, "malformed token: %s" % e) from None


def _verify(raw, data, digest, anchors, extra):
    info = der.parse_timestamp(raw)
    if info.status not in (0, 1) or info.gen_time is None:
        raise TSAError(INVALID, "status %s is not granted" % info.status)
    # the SignedData, every embedded certificate parsed (a damaged one makes
    # the token malformed)
    t, s, e = der.read_tlv(raw, 0)
    kids = der.children(raw, s, e)
    ci = kids[0] if kids[0][0] == 0x06 else None
    ci = (0x30, s, e) if ci else kids[1]
    ck = der.children(raw, ci[1], ci[2])
    sd = der.children(raw, ck[1][1], ck[1][2])[0]
    f = der.children(raw, sd[1], sd[2])
    tags = [x[0] for x in f]
    # (digestAlgorithms, tags[1], is not read: outside the signature, it binds nothing)
    if not (sd[0] == 0x30 and len(f) >= 4 and tags[0] == 0x02 and tags[2] == 0x30 and tags[-1] == 0x31
            and all(t3 in (0xA0, 0xA1) for t3 in tags[3:-1]) and tags[3:-1] == sorted(set(tags[3:-1]))):
        raise TSAError(INVALID, "malformed SignedData")
    eci = der.children(raw, f[2][1], f[2][2])
    tst = der.children(raw, eci[1][1], eci[1][2])[0]
    tst_bytes = raw[tst[1]:tst[2]]
    certs = []
    for t2, s2, e2 in f[3:-1]:
        if t2 == 0xA0:
            certs = [Cert(raw[_start(raw, c):c[2]]) for c in der.children(raw, s2, e2) if c[0] == 0x30]
    if info.version != 1 or info.policy is None or info.serial is None or info.critical_extension:
        raise TSAError(INVALID, "TSTInfo: version 1, a policy, a serial number and no critical extension required")
    signers = der.children(raw, f[-1][1], f[-1][2])
    if len(signers) != 1:
        raise TSAError(INVALID, "%d signers, want one" % len(signers))
    if info.hash_alg not in ("sha256", "sha384", "sha512") or not info.hash_params_ok:
        raise TSAError(NOT_OVER, "message imprint by %s" % info.hash_alg)
    si = der.children(raw, signers[0][1], signers[0][2])
    tags = [x[0] for x in si]
    if not (signers[0][0] == 0x30 and len(si) in (6, 7) and tags[0] == 0x02 and tags[1] in (0x30, 0x80)
            and tags[2] == 0x30 and tags[3] == 0xA0 and tags[4] == 0x30 and tags[5] == 0x04
            and (len(si) == 6 or tags[6] == 0xA1)):
        raise TSAError(INVALID, "malformed SignerInfo")
    sid = si[1]
    # FORMATS.md "Signature and timestamp": the rules in the order their
    # codes take precedence: the TSA certificate and its chain, then the
    # signer information, then the imprint's value.
    pool = certs + [Cert(c) for c in extra]
    leaf = _signer(raw, sid, pool)
    if leaf is None:
        raise TSAError(INVALID, "the TSA certificate is neither embedded in the token nor given")
    _tsa_rules(leaf)
    _chain(leaf, pool, [Cert(a) for a in anchors], info.gen_time)
    dalg = HASHES.get(der.oid(raw, *der.children(raw, si[2][1], si[2][2])[0][1:]))
    if dalg is None:
        raise TSAError(INVALID, "CMS digest algorithm is not SHA-256/384/512")
    if si[3][0] != 0xA0:
        raise TSAError(INVALID, "no signed attributes")
    attrs_raw = bytearray(raw[_start(raw, si[3]):si[3][2]])
    attrs_raw[0] = 0x31  # RFC 5652 5.4: the [0] IMPLICIT tag becomes SET, the content as received
    salg = der.oid(raw, *der.children(raw, si[4][1], si[4][2])[0][1:])
    sig = raw[si[5][1]:si[5][2]]
    attrs = {}
    for _, a_s, a_e in der.children(raw, si[3][1], si[3][2]):
        a = der.children(raw, a_s, a_e)
        name = der.oid(raw, *a[0][1:])
        vals = der.children(raw, a[1][1], a[1][2])
        if name in attrs or len(vals) != 1:
            raise TSAError(INVALID, "signed attribute %s twice or with %d values" % (name, len(vals)))
        attrs[name] = (raw, vals[0])
    ct = attrs.get(OID_CONTENT_TYPE)
    if not ct or der.oid(ct[0], *ct[1][1:]) != der.OID_TSTINFO:
        raise TSAError(INVALID, "content-type attribute is not id-ct-TSTInfo")
    md = attrs.get(OID_MESSAGE_DIGEST)
    if not md or raw[md[1][1]:md[1][2]] != hashlib.new(dalg, tst_bytes).digest():
        raise TSAError(INVALID, "message-digest attribute is not the digest of the TSTInfo")
    if salg in SIG_HASH:
        hname = SIG_HASH[salg]
    elif salg in (OID_RSA, OID_EC, OID_ED25519):
        hname = dalg
    else:
        raise TSAError(INVALID, "signature algorithm %s is not accepted" % salg)
    if not leaf.verify(bytes(attrs_raw), hname, sig):
        raise TSAError(INVALID, "the CMS signature does not verify")
    _ess(attrs, leaf)
    want = digest if digest is not None else hashlib.new(info.hash_alg, data).digest()
    if info.imprint != want:
        raise TSAError(NOT_OVER, "the message imprint is not %s of the time-stamped bytes" % info.hash_alg)
    return info.gen_time, leaf


def _signer(raw, sid, certs):
    if sid[0] == 0x30:  # IssuerAndSerialNumber
        k = der.children(raw, sid[1], sid[2])
        issuer = raw[_start(raw, k[0]):k[0][2]]
        serial = raw[k[1][1]:k[1][2]]
        for c in certs:
            if c.issuer == issuer and c.serial == serial:
                return c
    elif sid[0] == 0x80:  # [0] SubjectKeyIdentifier
        ski = raw[sid[1]:sid[2]]
        for c in certs:
            x = c.ext.get(OID_SKI)
            if x and x[1][2:] == ski:
                return c
    return None


def _ess(attrs, leaf):
    for oid, hname in ((OID_SIGNING_CERT_V2, "sha256"), (OID_SIGNING_CERT, "sha1")):
        a = attrs.get(oid)
        if not a:
            continue
        b, v = a
        certs_seq = der.children(b, v[1], v[2])[0]
        for _, es, ee in der.children(b, certs_seq[1], certs_seq[2]):
            x = der.children(b, es, ee)
            h = hname
            if x[0][0] == 0x30:  # v2: hashAlgorithm present
                h = HASHES.get(der.oid(b, *der.children(b, x[0][1], x[0][2])[0][1:]))
                x = x[1:]
                if h is None:
                    continue
            if b[x[0][1]:x[0][2]] == hashlib.new(h, leaf.raw).digest():
                return
        raise TSAError(INVALID, "the ESS signing-certificate attribute does not designate the TSA certificate")
    raise TSAError(INVALID, "no ESS signing-certificate attribute")


def _tsa_rules(c):
    eku = c.ext.get(OID_EKU)
    if not eku or not eku[0]:
        raise TSAError(INVALID, "the TSA certificate's extended key usage is absent or not critical")
    seq = der.children(eku[1], 0, len(eku[1]))[0]
    usages = [der.oid(eku[1], s, e) for _, s, e in der.children(eku[1], seq[1], seq[2])]
    if usages != [OID_TIMESTAMPING]:
        raise TSAError(INVALID, "the TSA certificate's extended key usage is not only timeStamping")
    ku = c.ext.get(OID_KU)
    if ku:
        t, s, e = der.read_tlv(ku[1], 0)
        bits = ku[1][s + 1:e]
        v = int.from_bytes(bits, "big") << 0
        allowed = 0xC0 << (8 * (len(bits) - 1)) if bits else 0
        if v & ~allowed:
            raise TSAError(INVALID, "the TSA certificate's key usage allows more than signatures")
    if c.is_ca():
        raise TSAError(INVALID, "the TSA certificate is a CA")


HANDLED_EXTENSIONS = {"2.5.29.%d" % n for n in (14, 15, 17, 19, 30, 32, 33, 35, 36, 37, 54)}


def _chain(leaf, pool, anchors, t):
    for oid_, (crit, _) in leaf.ext.items():
        if crit and oid_ not in HANDLED_EXTENSIONS:
            raise TSAError(UNTRUSTED, "the TSA certificate has an unhandled critical extension %s" % oid_)
    cur = leaf
    for _ in range(10):
        if not cur.not_before <= t <= cur.not_after:
            raise TSAError(UNTRUSTED, "a certificate of the chain is not valid at genTime")
        if any(a.raw == cur.raw for a in anchors):
            return
        nxt = None
        for cand in anchors + pool:
            if cand.subject != cur.issuer or cand.raw == cur.raw:
                continue
            h = SIG_HASH.get(cur.sig_alg, "sha256" if cur.sig_alg == OID_ED25519 else None)
            if cur.sig_alg not in SIG_HASH and cur.sig_alg != OID_ED25519:
                continue
            if cand.is_ca() and cand.verify(cur.tbs, h, cur.signature):
                nxt = cand
                break
        if nxt is None:
            raise TSAError(UNTRUSTED, "no chain to a trusted certificate")
        cur = nxt
    raise TSAError(UNTRUSTED, "chain too long")
