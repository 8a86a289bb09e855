"""Minimal DER reader for RFC 3161 responses (RFC 3161, RFC 5652), standard library only.

It reads what the second implementation checks itself: the response status,
the TSTInfo (version, policy, message imprint, serial number, genTime,
extensions' criticality) and the number of CMS signers. It does not verify the
CMS signature or the certificate chain (see docs/INTEROP.md).
"""

import datetime
import re


class DERError(ValueError):
    """Bytes that are not the DER structure expected."""


def read_tlv(b, i=0):
    """Returns (tag, content_start, end) of the element at i."""
    if i + 2 > len(b):
        raise DERError("truncated element")
    tag = b[i]
    if tag & 0x1F == 0x1F:
        raise DERError("high tag numbers are not used here")
    ln = b[i + 1]
    j = i + 2
    if ln & 0x80:
        n = ln & 0x7F
        if n == 0 or n > 4 or j + n > len(b):
            raise DERError("bad length")
        ln = int.from_bytes(b[j:j + n], "big")
        if ln < 0x80 or b[j] == 0:
            raise DERError("non-minimal length (not DER)")
        j += n
    if j + ln > len(b):
        raise DERError("element runs past its container")
    return tag, j, j + ln


def children(b, start, end):
    out = []
    i = start
    while i < end:
        t, s, e = read_tlv(b, i)
        out.append((t, s, e))
        i = e
    if i != end:
        raise DERError("trailing bytes in constructed element")
    return out


def oid(b, s, e):
    """Decodes an OBJECT IDENTIFIER's content (X.690 8.19), minimal encoding required."""
    v = b[s:e]
    if not v or v[-1] & 0x80:
        raise DERError("malformed OID")
    subs, n, start = [], 0, True
    for c in v:
        if start and c == 0x80:
            raise DERError("non-minimal OID arc")
        n = (n << 7) | (c & 0x7F)
        start = not c & 0x80
        if start:
            subs.append(n)
            n = 0
    first = min(subs[0] // 40, 2)
    return ".".join(map(str, [first, subs[0] - 40 * first] + subs[1:]))


def integer(b, s, e):
    return int.from_bytes(b[s:e], "big", signed=True)


OID_SIGNED_DATA = "1.2.840.113549.1.7.2"
OID_TSTINFO = "1.2.840.113549.1.9.16.1.4"
HASH_OIDS = {
    "2.16.840.1.101.3.4.2.1": "sha256",
    "2.16.840.1.101.3.4.2.2": "sha384",
    "2.16.840.1.101.3.4.2.3": "sha512",
    "1.3.14.3.2.26": "sha1",
    "1.2.840.113549.2.5": "md5",
}

_GT = re.compile(r"^(\d{14})(\.\d*[1-9])?Z$")


def generalized_time(text):
    m = _GT.match(text)
    if not m:
        raise DERError("genTime %r is not a DER GeneralizedTime" % text)
    t = datetime.datetime.strptime(m.group(1), "%Y%m%d%H%M%S").replace(tzinfo=datetime.timezone.utc)
    frac = float("0" + m.group(2)) if m.group(2) else 0.0
    return t.timestamp() + frac


class TSTInfo:
    """What a token says: status, imprint algorithm name and value, genTime (seconds since 1970)."""

    def __init__(self):
        self.status = None
        self.version = None
        self.policy = None
        self.hash_alg = None
        self.hash_params_ok = True
        self.imprint = None
        self.serial = None
        self.gen_time = None
        self.gen_time_text = None
        self.critical_extension = False
        self.signers = 0


def parse_timestamp(b):
    """Parses a DER TimeStampResp, or a bare TimeStampToken (ContentInfo)."""
    info = TSTInfo()
    t, s, e = read_tlv(b, 0)
    if t != 0x30 or e != len(b):
        raise DERError("not one DER SEQUENCE")
    kids = children(b, s, e)
    if kids and kids[0][0] == 0x06:  # bare ContentInfo
        info.status = 0
        ci = (t, s, e)
    else:
        if not kids or kids[0][0] != 0x30:
            raise DERError("no PKIStatusInfo")
        st = children(b, kids[0][1], kids[0][2])
        if not st or st[0][0] != 0x02:
            raise DERError("no PKIStatus")
        info.status = integer(b, st[0][1], st[0][2])
        if len(kids) < 2:
            return info
        ci = kids[1]
    ck = children(b, ci[1], ci[2])
    if len(ck) != 2 or ck[0][0] != 0x06 or oid(b, ck[0][1], ck[0][2]) != OID_SIGNED_DATA or ck[1][0] != 0xA0:
        raise DERError("the token is not CMS SignedData")
    sd = children(b, ck[1][1], ck[1][2])
    if len(sd) != 1 or sd[0][0] != 0x30:
        raise DERError("bad SignedData")
    sdk = children(b, sd[0][1], sd[0][2])
    if len(sdk) < 4:
        raise DERError("bad SignedData")
    eci = children(b, sdk[2][1], sdk[2][2])
    if len(eci) != 2 or oid(b, eci[0][1], eci[0][2]) != OID_TSTINFO or eci[1][0] != 0xA0:
        raise DERError("the signed content is not a TSTInfo")
    octs = children(b, eci[1][1], eci[1][2])
    if len(octs) != 1 or octs[0][0] != 0x04:
        raise DERError("bad eContent")
    signer_set = sdk[-1]
    if signer_set[0] != 0x31:
        raise DERError("no signerInfos")
    info.signers = len(children(b, signer_set[1], signer_set[2]))
    tb = b[octs[0][1]:octs[0][2]]
    t, s, e = read_tlv(tb, 0)
    if t != 0x30 or e != len(tb):
        raise DERError("TSTInfo is not one SEQUENCE")
    f = children(tb, s, e)
    if len(f) < 5:
        raise DERError("TSTInfo too short")
    info.version = integer(tb, f[0][1], f[0][2])
    if f[1][0] == 0x06:
        info.policy = oid(tb, f[1][1], f[1][2])
    mi = children(tb, f[2][1], f[2][2])
    alg = children(tb, mi[0][1], mi[0][2])
    info.hash_alg = HASH_OIDS.get(oid(tb, alg[0][1], alg[0][2]), oid(tb, alg[0][1], alg[0][2]))
    if len(alg) > 1 and not (len(alg) == 2 and alg[1][0] == 0x05 and alg[1][1] == alg[1][2]):
        info.hash_params_ok = False
    info.imprint = tb[mi[1][1]:mi[1][2]]
    if f[3][0] == 0x02:
        info.serial = integer(tb, f[3][1], f[3][2])
    if f[4][0] != 0x18:
        raise DERError("no genTime")
    info.gen_time_text = tb[f[4][1]:f[4][2]].decode("ascii")
    info.gen_time = generalized_time(info.gen_time_text)
    for t, s2, e2 in f[5:]:
        if t == 0xA1:  # extensions [1] IMPLICIT
            for et, es, ee in children(tb, s2, e2):
                ext = children(tb, es, ee)
                if len(ext) == 3 and ext[1][0] == 0x01 and tb[ext[1][1]:ext[1][2]] != b"\x00":
                    info.critical_extension = True
    return info
