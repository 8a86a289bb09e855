"""Cryptographic primitives of the svc second implementation, standard library only.

Written from the published specifications, not from svc's code:
  - Ed25519 verification: RFC 8032 section 5.1.7 (pure Ed25519, no pre-hash).
  - Keccak-256 (the original Keccak padding 0x01, not SHA-3's 0x06): FIPS 202's
    Keccak-f[1600] permutation; needed to derive Poseidon2's round constants.
  - Poseidon2 over BN254 with width 2 (docs/FORMATS.md, "Poseidon2 commitments").
"""

import hashlib
import math

# ---------------------------------------------------------------- Ed25519 (RFC 8032)

_P = 2**255 - 19
_L = 2**252 + 27742317777372353535851937790883648493
_D = -121665 * pow(121666, _P - 2, _P) % _P
_SQRT_M1 = pow(2, (_P - 1) // 4, _P)


def _edd_add(p, q):
    # extended homogeneous coordinates (X, Y, Z, T), RFC 8032 5.1.4
    x1, y1, z1, t1 = p
    x2, y2, z2, t2 = q
    a = (y1 - x1) * (y2 - x2) % _P
    b = (y1 + x1) * (y2 + x2) % _P
    c = 2 * t1 * t2 * _D % _P
    dd = 2 * z1 * z2 % _P
    e, f, g, h = b - a, dd - c, dd + c, b + a
    return (e * f % _P, g * h % _P, f * g % _P, e * h % _P)


def _edd_mul(s, p):
    q = (0, 1, 1, 0)
    while s > 0:
        if s & 1:
            q = _edd_add(q, p)
        p = _edd_add(p, p)
        s >>= 1
    return q


def _edd_equal(p, q):
    x1, y1, z1, _ = p
    x2, y2, z2, _ = q
    return (x1 * z2 - x2 * z1) % _P == 0 and (y1 * z2 - y2 * z1) % _P == 0


def _edd_decompress(s):
    """Decodes a 32-byte point (RFC 8032 5.1.3); None when it is not a canonical point."""
    if len(s) != 32:
        return None
    y = int.from_bytes(s, "little")
    sign = y >> 255
    y &= (1 << 255) - 1
    if y >= _P:
        return None
    x2 = (y * y - 1) * pow(_D * y * y + 1, _P - 2, _P) % _P
    if x2 == 0:
        if sign:
            return None
        x = 0
    else:
        x = pow(x2, (_P + 3) // 8, _P)
        if (x * x - x2) % _P != 0:
            x = x * _SQRT_M1 % _P
        if (x * x - x2) % _P != 0:
            return None
        if (x & 1) != sign:
            x = _P - x
    return (x, y, 1, x * y % _P)


_GY = 4 * pow(5, _P - 2, _P) % _P
_G = _edd_decompress(_GY.to_bytes(32, "little"))


def ed25519_verify(public: bytes, msg: bytes, sig: bytes) -> bool:
    """Pure Ed25519 verification, cofactorless equation [S]B = R + [k]A, S < L required."""
    if len(public) != 32 or len(sig) != 64:
        return False
    a = _edd_decompress(public)
    r = _edd_decompress(sig[:32])
    if a is None or r is None:
        return False
    s = int.from_bytes(sig[32:], "little")
    if s >= _L:
        return False
    k = int.from_bytes(hashlib.sha512(sig[:32] + public + msg).digest(), "little") % _L
    return _edd_equal(_edd_mul(s, _G), _edd_add(r, _edd_mul(k, a)))


# ---------------------------------------------------------------- Keccak-256

_RC = [
    0x0000000000000001, 0x0000000000008082, 0x800000000000808A, 0x8000000080008000,
    0x000000000000808B, 0x0000000080000001, 0x8000000080008081, 0x8000000000008009,
    0x000000000000008A, 0x0000000000000088, 0x0000000080008009, 0x000000008000000A,
    0x000000008000808B, 0x800000000000008B, 0x8000000000008089, 0x8000000000008003,
    0x8000000000008002, 0x8000000000000080, 0x000000000000800A, 0x800000008000000A,
    0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008,
]
_ROT = [[0, 36, 3, 41, 18], [1, 44, 10, 45, 2], [62, 6, 43, 15, 61], [28, 55, 25, 21, 56], [27, 20, 39, 8, 14]]
_M64 = (1 << 64) - 1


def _rol(v, n):
    return ((v << n) | (v >> (64 - n))) & _M64 if n else v


def _keccak_f(a):
    # a[x][y], lanes little-endian 64-bit words
    for rc in _RC:
        c = [a[x][0] ^ a[x][1] ^ a[x][2] ^ a[x][3] ^ a[x][4] for x in range(5)]
        d = [c[(x - 1) % 5] ^ _rol(c[(x + 1) % 5], 1) for x in range(5)]
        a = [[a[x][y] ^ d[x] for y in range(5)] for x in range(5)]
        b = [[0] * 5 for _ in range(5)]
        for x in range(5):
            for y in range(5):
                b[y][(2 * x + 3 * y) % 5] = _rol(a[x][y], _ROT[x][y])
        a = [[b[x][y] ^ ((~b[(x + 1) % 5][y]) & b[(x + 2) % 5][y]) for y in range(5)] for x in range(5)]
        a[0][0] ^= rc
    return a


def keccak256(data: bytes) -> bytes:
    """Keccak-256 as in Ethereum and golang.org/x/crypto/sha3.NewLegacyKeccak256 (pad 0x01...0x80)."""
    rate = 136
    msg = bytearray(data) + b"\x01"
    while len(msg) % rate:
        msg += b"\x00"
    msg[-1] |= 0x80
    a = [[0] * 5 for _ in range(5)]
    for off in range(0, len(msg), rate):
        block = msg[off:off + rate]
        for i in range(rate // 8):
            x, y = i % 5, i // 5
            a[x][y] ^= int.from_bytes(block[8 * i:8 * i + 8], "little")
        a = _keccak_f(a)
    out = b""
    for i in range(4):
        out += a[i % 5][i // 5].to_bytes(8, "little")
    return out


# ---------------------------------------------------------------- Poseidon2 (BN254, width 2)

BN254_R = 0x30644E72E131A029B85045B68181585D2833E84879B9709143E1F593F0000001
P2_FULL, P2_PARTIAL = 6, 50
P2_SEED = "Poseidon2-BN254[t=2,rF=6,rP=50,d=5]"  # docs/FORMATS.md, "The permutation, exactly"


def poseidon2_round_constants():
    """Round constants as docs/FORMATS.md "Poseidon2 commitments" derives them."""
    seed = P2_SEED.encode("ascii")
    rnd = keccak256(seed)
    keys = []
    half = P2_FULL // 2

    def nxt():
        nonlocal rnd
        rnd = keccak256(rnd)
        return int.from_bytes(rnd, "big") % BN254_R

    for _ in range(half):
        keys.append([nxt(), nxt()])
    for _ in range(P2_PARTIAL):
        keys.append([nxt()])
    for _ in range(half):
        keys.append([nxt(), nxt()])
    return keys


_P2_KEYS = None


def poseidon2_permute(s0, s1):
    global _P2_KEYS
    if _P2_KEYS is None:
        _P2_KEYS = poseidon2_round_constants()
    r = BN254_R

    def ext(a, b):  # circ(2, 1)
        t = a + b
        return (t + a) % r, (t + b) % r

    def inner(a, b):  # [[2, 1], [1, 3]]
        t = a + b
        return (a + t) % r, (2 * b + t) % r

    s0, s1 = ext(s0, s1)
    half = P2_FULL // 2
    for i in range(half):
        s0, s1 = pow((s0 + _P2_KEYS[i][0]) % r, 5, r), pow((s1 + _P2_KEYS[i][1]) % r, 5, r)
        s0, s1 = ext(s0, s1)
    for i in range(half, half + P2_PARTIAL):
        s0 = pow((s0 + _P2_KEYS[i][0]) % r, 5, r)
        s0, s1 = inner(s0, s1)
    for i in range(half + P2_PARTIAL, P2_FULL + P2_PARTIAL):
        s0, s1 = pow((s0 + _P2_KEYS[i][0]) % r, 5, r), pow((s1 + _P2_KEYS[i][1]) % r, 5, r)
        s0, s1 = ext(s0, s1)
    return s0, s1


def poseidon2_md(elements):
    """Merkle-Damgard from state 0 with C(s, m) = P(s, m)[1] + m."""
    s = 0
    for e in elements:
        if not 0 <= e < BN254_R:
            raise ValueError("element is not a canonical BN254 scalar")
        s = (poseidon2_permute(s, e)[1] + e) % BN254_R
    return s


def poseidon2_elements(tag: str, payload: bytes):
    els = [int.from_bytes(tag.encode("ascii"), "big")]
    for i in range(0, len(payload), 31):
        els.append(int.from_bytes(payload[i:i + 31].ljust(31, b"\x00"), "big"))
    els.append(len(payload))
    return els


def poseidon2_commit(payload: bytes, tag: str = "svc/poseidon2/bytes/v1") -> str:
    return "poseidon2:" + poseidon2_md(poseidon2_elements(tag, payload)).to_bytes(32, "big").hex()


def poseidon2_commit_int8(values) -> str:
    return poseidon2_commit(bytes(v + 128 for v in values), "svc/poseidon2/int8/v1")


CONDITION_CIRCUITS = ("threshold_check", "truncation_check", "below_threshold_check")


def condition_commit(circuit: str, value: int, salt: int) -> str:
    """Condition commitment (FORMATS.md "Condition commitments"): Poseidon2
    Merkle-Damgard over (domain, value, salt), no length element."""
    if circuit not in CONDITION_CIRCUITS or not 0 <= value < 2**32:
        raise ValueError("not a condition circuit or value out of range")
    domain = int.from_bytes(("svc/zk/%s/v1" % circuit).encode("ascii"), "big")
    return "poseidon2:" + poseidon2_md([domain, value, salt]).to_bytes(32, "big").hex()


def quantize_probability(p: float):
    """Q(p) = min(floor(p * 2^32), 2^32 - 1) for p in [0, 1] (PROOFS.md); None otherwise."""
    if p != p or p < 0 or p > 1:
        return None
    return min(math.floor(math.ldexp(p, 32)), 2**32 - 1)
