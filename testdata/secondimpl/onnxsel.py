#!/usr/bin/env python3
"""onnxsel.py: which nodes a Bounded Inference trace records, from docs/ alone.

Written from docs/BOUNDED.md ("Operator classes", "The trace", the trace
modes and the numbered residual rule) and docs/FORMATS.md (trace modes),
without reading svc's Go code. It reads an ONNX model with its own minimal
protobuf reader (standard library only), assigns every node its operator
class, and lists the node indices each trace mode records, in node order, so
that an auditor replaying a trace selects exactly the nodes the client did.

usage:
  onnxsel.py select MODEL.onnx            one JSON object: classes, full, production, residual
  onnxsel.py select-batch < PATHS         one model path a line in, one JSON object a line out
  onnxsel.py strip-softmax IN OUT         drop a final Softmax: its input becomes the first output
  onnxsel.py add-softmax IN OUT           append a Softmax to the first output (axis -1)
  onnxsel.py trace TRACE MODEL            check a trace file's operators and Merkle root against its model
  onnxsel.py measurements FILE MODEL...   read a svc.calibration/v1 file strictly (FORMATS.md
                                          "Calibration measurements") and check its nodes, classes
                                          and selections against the models it names

The rules it follows are BOUNDED.md's "Which nodes are traced, exactly" (written
after this implementation first disagreed with svc: docs/INTEROP.md).
"""

import json
import math
import os
import struct
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# ---------------------------------------------------------------- protobuf


class ProtoError(ValueError):
    """The bytes are not the protobuf this reader expects."""


def varint(b, i):
    x, shift = 0, 0
    while True:
        if i >= len(b):
            raise ProtoError("truncated varint")
        c = b[i]
        i += 1
        x |= (c & 0x7F) << shift
        if not c & 0x80:
            return x, i
        shift += 7
        if shift > 63:
            raise ProtoError("varint longer than 10 bytes")


def fields(b):
    """Yield (field number, wire type, value, start, end) of one message:
    value is an int for varints and fixed widths, bytes for length-delimited."""
    i = 0
    while i < len(b):
        start = i
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise ProtoError("field number 0")
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            if i + 8 > len(b):
                raise ProtoError("truncated fixed64")
            v = b[i:i + 8]
            i += 8
        elif wt == 2:
            n, i = varint(b, i)
            if i + n > len(b):
                raise ProtoError("truncated length-delimited field")
            v = b[i:i + n]
            i += n
        elif wt == 5:
            if i + 4 > len(b):
                raise ProtoError("truncated fixed32")
            v = b[i:i + 4]
            i += 4
        else:
            raise ProtoError("wire type %d" % wt)
        yield num, wt, v, start, i


def packed_ints(wt, v):
    if wt == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def signed64(x):
    return x - (1 << 64) if x >= 1 << 63 else x


def enc_varint(x):
    out = bytearray()
    while True:
        c = x & 0x7F
        x >>= 7
        if x:
            out.append(c | 0x80)
        else:
            out.append(c)
            return bytes(out)


def enc_field(num, payload):
    return enc_varint(num << 3 | 2) + enc_varint(len(payload)) + payload


# ONNX TensorProto.DataType
FLOAT, UINT8, INT8, UINT16, INT16, INT32, INT64, STRING, BOOL, FLOAT16, DOUBLE = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
BFLOAT16 = 16


class Tensor:
    """TensorProto: dims 1, data_type 2, float_data 4, int32_data 5, int64_data 7,
    name 8, raw_data 9, double_data 10, data_location 14."""

    def __init__(self, b):
        self.dims, self.dtype, self.name, self.raw = [], 0, "", None
        self.floats, self.ints, self.doubles, self.external = [], [], [], False
        for num, wt, v, _, _ in fields(b):
            if num == 1:
                self.dims += [signed64(x) for x in packed_ints(wt, v)]
            elif num == 2 and wt == 0:
                self.dtype = v
            elif num == 4:
                self.floats += list(struct.unpack("<%df" % (len(v) // 4), v)) if wt == 2 else \
                    [struct.unpack("<f", v)[0]]
            elif num in (5, 7):
                self.ints += [signed64(x) for x in packed_ints(wt, v)]
            elif num == 8 and wt == 2:
                self.name = v.decode()
            elif num == 9 and wt == 2:
                self.raw = v
            elif num == 10:
                self.doubles += list(struct.unpack("<%dd" % (len(v) // 8), v)) if wt == 2 else \
                    [struct.unpack("<d", v)[0]]
            elif num == 14 and wt == 0:
                self.external = v == 1

    def scalar(self):
        """The value of a tensor of exactly one element (the product of its
        dims) stored in the model, else None."""
        count = 1
        for d in self.dims:
            if d < 0:
                return None
            count *= d
        if count != 1:
            return None
        vs = self.values()
        if vs is None or len(vs) < 1:
            return None
        return float(vs[0])

    def values(self):
        """The elements as Python numbers, or None when not stored here."""
        if self.external:
            return None
        if self.raw is not None:
            fmt = {FLOAT: "f", DOUBLE: "d", INT32: "i", INT64: "q", INT8: "b", UINT8: "B", INT16: "h",
                   UINT16: "H", BOOL: "?", FLOAT16: "e"}.get(self.dtype)
            if fmt is None:
                return None
            n = len(self.raw) // struct.calcsize(fmt)
            return list(struct.unpack("<%d%s" % (n, fmt), self.raw[:n * struct.calcsize(fmt)]))
        if self.dtype in (FLOAT,):
            return self.floats
        if self.dtype == DOUBLE:
            return self.doubles
        if self.dtype == FLOAT16:  # int32_data holds the bits
            return [struct.unpack("<e", struct.pack("<H", x & 0xFFFF))[0] for x in self.ints]
        return self.ints


class Attr:
    """AttributeProto: name 1, f 2, i 3, s 4, t 5, floats 7, ints 8."""

    def __init__(self, b):
        self.name, self.f, self.i, self.s, self.t = "", None, None, None, None
        self.floats, self.ints = [], []
        for num, wt, v, _, _ in fields(b):
            if num == 1 and wt == 2:
                self.name = v.decode()
            elif num == 2 and wt == 5:
                self.f = struct.unpack("<f", v)[0]
            elif num == 3 and wt == 0:
                self.i = signed64(v)
            elif num == 4 and wt == 2:
                self.s = v
            elif num == 5 and wt == 2:
                self.t = Tensor(v)
            elif num == 7:
                self.floats += list(struct.unpack("<%df" % (len(v) // 4), v)) if wt == 2 else \
                    [struct.unpack("<f", v)[0]]
            elif num == 8:
                self.ints += [signed64(x) for x in packed_ints(wt, v)]
            elif num == 22 and wt == 2:  # sparse_tensor: its values (field 1) carry the type
                for n2, w2, v2, _, _ in fields(v):
                    if n2 == 1 and w2 == 2:
                        self.t = Tensor(v2)
                        self.t.external = True  # no stored value


class Node:
    """NodeProto: input 1, output 2, name 3, op_type 4, attribute 5, domain 7."""

    def __init__(self, b):
        self.inputs, self.outputs, self.name, self.op, self.domain, self.attrs = [], [], "", "", "", {}
        for num, wt, v, _, _ in fields(b):
            if wt != 2:
                continue
            if num == 1:
                self.inputs.append(v.decode())
            elif num == 2:
                self.outputs.append(v.decode())
            elif num == 3:
                self.name = v.decode()
            elif num == 4:
                self.op = v.decode()
            elif num == 5:
                a = Attr(v)
                self.attrs[a.name] = a
            elif num == 7:
                self.domain = v.decode()

    def standard(self):
        return self.domain in ("", "ai.onnx")


def value_info(b):
    """ValueInfoProto name 1, type 2 -> TypeProto tensor_type 1 -> elem_type 1."""
    name, elem = "", 0
    for num, wt, v, _, _ in fields(b):
        if num == 1 and wt == 2:
            name = v.decode()
        elif num == 2 and wt == 2:
            for n2, w2, v2, _, _ in fields(v):
                if n2 == 1 and w2 == 2:
                    for n3, w3, v3, _, _ in fields(v2):
                        if n3 == 1 and w3 == 0:
                            elem = v3
    return name, elem


class Graph:
    """ModelProto graph 7 -> GraphProto: node 1, initializer 5, input 11,
    output 12, value_info 13."""

    def __init__(self, model):
        g = None
        for num, wt, v, _, _ in fields(model):
            if num == 7 and wt == 2:
                g = v
        if g is None:
            raise ProtoError("no graph")
        self.nodes, self.inits, self.inputs, self.outputs, self.declared = [], {}, [], [], {}
        for num, wt, v, _, _ in fields(g):
            if wt != 2:
                continue
            if num == 1:
                self.nodes.append(Node(v))
            elif num == 5:
                t = Tensor(v)
                self.inits[t.name] = t
            elif num == 15:  # sparse_initializer: its values (field 1) carry name and type
                for n2, w2, v2, _, _ in fields(v):
                    if n2 == 1 and w2 == 2:
                        t = Tensor(v2)
                        t.external = True  # no stored value
                        self.inits[t.name] = t
            elif num == 11:
                self.inputs.append(value_info(v))
            elif num == 12:
                self.outputs.append(value_info(v))
            elif num == 13:
                n, e = value_info(v)
                if e:
                    self.declared[n] = e
        self.producer = {}  # the first node listing a value among its outputs
        for i, n in enumerate(self.nodes):
            for o in n.outputs:
                if o and o not in self.producer:
                    self.producer[o] = i
        self.consumers = {}
        for i, n in enumerate(self.nodes):
            for x in n.inputs:
                if x:
                    self.consumers.setdefault(x, []).append(i)
        self._constants()
        self._types()

    # BOUNDED.md "Constants": initializers, Constant nodes' outputs, and the
    # outputs of a node with at least one non-empty input and only constant
    # ones (not random, control-flow or sequence operators), in node order.
    def _constants(self):
        self.const = set(self.inits)
        self.scalars = {}
        for name, t in self.inits.items():
            v = t.scalar()
            if v is not None:
                self.scalars[name] = v
        for n in self.nodes + self.nodes:  # twice over, for a file not sorted
            ins = [x for x in n.inputs if x]
            if n.op == "Constant" or (n.op not in RANDOM_OPS | OPAQUE_OPS and ins and all(x in self.const for x in ins)):
                self.const.update(o for o in n.outputs if o)
            else:
                continue
            if not n.outputs or not n.outputs[0]:
                continue
            v = constant_scalar(n)
            if v is None and n.op in SCALAR_OPS and n.inputs and n.inputs[0] in self.scalars:
                v = self.scalars[n.inputs[0]]
            if v is not None:
                self.scalars[n.outputs[0]] = v

    def _types(self):
        """BOUNDED.md "Element types": declared types win, then each node's
        outputs from its inputs, in (topological) node order."""
        t = {}
        for name, tensor in self.inits.items():
            t[name] = tensor.dtype
        for name, e in self.inputs:
            if e:
                t[name] = e
        for name, e in list(self.declared.items()) + self.outputs:
            if e:
                t[name] = e
        declared = set(t)
        for i in self.topo_order():
            n = self.nodes[i]
            for k, o in enumerate(n.outputs):
                if o and o not in declared:
                    ty = output_type(n, k, t)
                    if ty:
                        t[o] = ty
        self.types = t

    def topo_order(self):
        """File order when sorted (ONNX requires it); else a topological order."""
        pending, nxt, srt = [0] * len(self.nodes), [[] for _ in self.nodes], True
        for i, n in enumerate(self.nodes):
            for x in n.inputs:
                p = self.producer.get(x)
                if p is not None and p != i:
                    pending[i] += 1
                    nxt[p].append(i)
                    srt = srt and p < i
        if srt:
            return list(range(len(self.nodes)))
        order = [i for i in range(len(self.nodes)) if pending[i] == 0]
        k = 0
        while k < len(order):
            for c in nxt[order[k]]:
                pending[c] -= 1
                if pending[c] == 0:
                    order.append(c)
            k += 1
        return order + [i for i in range(len(self.nodes)) if pending[i] > 0]

    def first_output_of(self, value):
        """The node whose FIRST output is value, or None."""
        p = self.producer.get(value)
        if p is not None and self.nodes[p].outputs and self.nodes[p].outputs[0] == value:
            return p
        return None

    def scalar(self, value):
        """A constant's stored value (BOUNDED.md "Constants"), else None."""
        return self.scalars.get(value)




SCALAR_OPS = {"Cast", "Identity", "Reshape", "Unsqueeze", "Squeeze", "Flatten"}


def constant_scalar(n):
    """The value of a Constant node's one-element value, else None."""
    if n.op != "Constant":
        return None
    a = n.attrs
    if "value" in a:
        return a["value"].t.scalar() if a["value"].t is not None else None
    if "value_float" in a and a["value_float"].f is not None:
        return float(a["value_float"].f)
    if "value_int" in a and a["value_int"].i is not None:
        return float(a["value_int"].i)
    return None


RANDOM_OPS = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli"}
OPAQUE_OPS = {"If", "Loop", "Scan", "SequenceAt", "SequenceConstruct", "SplitToSequence", "ConcatFromSequence",
              "Optional", "OptionalGetElement"}
INT64_OPS = {"Shape", "Size", "NonZero", "ArgMax", "ArgMin", "NonMaxSuppression"}
BOOL_OPS = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "Xor", "IsNaN", "IsInf"}
FUSED_OPS = {"Gelu", "FastGelu", "BiasGelu", "QuickGelu", "SkipLayerNormalization", "SkipSimplifiedLayerNormalization",
             "SimplifiedLayerNormalization", "Attention", "MultiHeadAttention", "FusedMatMul", "BiasAdd", "BiasSoftmax"}
ANY_OPS = {"Add", "Sub", "Mul", "Div", "Mod", "Max", "Min", "Sum", "Mean", "Concat", "MatMul", "Gemm", "Einsum"}
STRING = 8
INT32 = 6


def output_type(n, k, t):
    """The element type of output k of node n (the table in BOUNDED.md)."""
    def inp(i):
        return t.get(n.inputs[i], 0) if i < len(n.inputs) and n.inputs[i] else 0

    def attr_int(name, default):
        a = n.attrs.get(name)
        return a.i if a is not None and a.i is not None else default
    op = n.op
    if k > 0:
        if op == "Split":
            return inp(0)
        if op in ("TopK", "MaxPool", "Unique"):
            return INT64
        if op == "Dropout":
            return BOOL
        if op in ("LayerNormalization", "SkipLayerNormalization", "SkipSimplifiedLayerNormalization",
                  "SimplifiedLayerNormalization"):
            return inp(0) if k == 3 and op == "SkipLayerNormalization" else FLOAT
        if op == "EmbedLayerNormalization":
            return INT32 if k == 1 else FLOAT
        if op == "DynamicQuantizeLinear":
            return FLOAT if k == 1 else UINT8
        return 0
    if op == "Cast":
        return attr_int("to", 0)
    if op == "CastLike":
        return inp(1)
    if op == "Constant":
        for name, a in n.attrs.items():
            if name in ("value", "sparse_value") and a.t is not None:
                return a.t.dtype
            if name in ("value_float", "value_floats"):
                return FLOAT
            if name in ("value_int", "value_ints"):
                return INT64
            if name in ("value_string", "value_strings"):
                return STRING
        return 0
    if op == "ConstantOfShape":
        a = n.attrs.get("value")
        return a.t.dtype if a is not None and a.t is not None else FLOAT
    if op in ("EyeLike", "RandomNormalLike", "RandomUniformLike", "Bernoulli"):
        return attr_int("dtype", 0) or inp(0)
    if op in ("RandomNormal", "RandomUniform"):
        return attr_int("dtype", FLOAT)
    if op == "Multinomial":
        return attr_int("dtype", INT32)
    if op in INT64_OPS:
        return INT64
    if op in BOOL_OPS:
        return BOOL
    if op == "Where":
        return inp(1) or inp(2)
    if op == "OneHot":
        return inp(2)
    if op in ("MatMulInteger", "ConvInteger"):
        return INT32
    if op == "QuantizeLinear":
        return inp(2) or UINT8
    if op == "DynamicQuantizeLinear":
        return UINT8
    if op == "DequantizeLinear":
        return inp(1) or FLOAT
    if op == "EmbedLayerNormalization":
        return inp(2) or FLOAT
    if op in FUSED_OPS:
        return inp(0) or FLOAT
    if op in ANY_OPS:
        return next((inp(i) for i in range(len(n.inputs)) if inp(i)), 0)
    if op in OPAQUE_OPS:
        return 0
    return inp(0)


# ---------------------------------------------------------------- classes

LINEAR_OPS = {"MatMul", "Gemm", "FusedMatMul", "MatMulInteger", "QLinearMatMul", "MatMulIntegerToFloat", "MatMulNBits",
              "DynamicQuantizeMatMul", "QGemm"}
LAYERNORM_OPS = {"LayerNormalization", "SkipLayerNormalization", "SimplifiedLayerNormalization",
                 "SkipSimplifiedLayerNormalization", "EmbedLayerNormalization"}
GELU_OPS = {"Gelu", "FastGelu", "BiasGelu", "QuickGelu"}


class Patterns:
    """BOUNDED.md "Classes": the pattern vocabulary ("a consumer", "Op(a, c)")."""

    def __init__(self, g):
        self.g, self.nodes = g, g.nodes

    def out(self, i):
        n = self.nodes[i]
        return n.outputs[0] if n.outputs else ""

    def is_op(self, i, op, ninputs):
        n = self.nodes[i]
        return n.op == op and len(n.inputs) == ninputs and len(n.outputs) > 0

    def consumer(self, v, op, accept, ninputs=2):
        """The first node in file order of op with ninputs inputs and an output
        that takes v and for which accept holds."""
        if not v:
            return None
        for i in self.g.consumers.get(v, []):
            if self.is_op(i, op, ninputs) and accept(i):
                return i
        return None

    def near(self, c, want):
        v = self.g.scalar(c)
        return v is None or abs(v - want) <= 1e-2 * abs(want)

    def with_const(self, i, want=None):
        """(non-constant input, constant input) of binary node i when exactly
        one is constant and (want given) its stored value is within 1%."""
        ins = self.nodes[i].inputs
        if len(ins) != 2 or (ins[0] in self.g.const) == (ins[1] in self.g.const):
            return None
        act, c = (ins[1], ins[0]) if ins[0] in self.g.const else (ins[0], ins[1])
        if want is not None and not self.near(c, want):
            return None
        return act, c

    def other(self, i, v):
        ins = self.nodes[i].inputs
        if len(ins) != 2:
            return None
        if ins[0] == v:
            return ins[1]
        if ins[1] == v:
            return ins[0]
        return None

    def sole(self, v, i):
        return self.g.consumers.get(v, []) == [i]

    def layer_norm(self, r):
        n, nodes = self.nodes[r], self.nodes
        if not n.inputs or n.inputs[0] in self.g.const or not n.outputs:
            return []
        x, mean = n.inputs[0], self.out(r)
        sub = self.consumer(mean, "Sub", lambda i: nodes[i].inputs == [x, mean])
        if sub is None:
            return []
        d = self.out(sub)

        def pow2(i):
            wc = self.with_const(i, 2.0)
            return wc is not None and wc[0] == d and nodes[i].inputs[0] == d
        sq = self.consumer(d, "Pow", pow2)
        if sq is None:
            sq = self.consumer(d, "Mul", lambda i: nodes[i].inputs == [d, d])
        if sq is None:
            return []
        r2 = next((i for i in self.g.consumers.get(self.out(sq), []) if nodes[i].op == "ReduceMean" and nodes[i].inputs
                   and nodes[i].inputs[0] == self.out(sq) and nodes[i].outputs), None)
        if r2 is None:
            return []
        eps = self.consumer(self.out(r2), "Add", lambda i: self.with_const(i) is not None)
        if eps is None:
            return []
        sqrt = self.consumer(self.out(eps), "Sqrt", lambda i: True, 1)
        if sqrt is None:
            return []
        found = [r, sub, sq, r2, eps, sqrt]
        norm = self.consumer(self.out(sqrt), "Div", lambda i: nodes[i].inputs[0] == d)
        if norm is None:
            recip = self.consumer(self.out(sqrt), "Reciprocal", lambda i: True, 1)
            if recip is None:
                return []
            norm = self.consumer(self.out(recip), "Mul", lambda i: self.other(i, self.out(recip)) == d)
            if norm is None:
                return []
            found.append(recip)
        found.append(norm)
        m = self.consumer(self.out(norm), "Mul", lambda i: self.with_const(i) is not None)
        if m is not None and self.sole(self.out(norm), m):
            found.append(m)
            a = self.consumer(self.out(m), "Add", lambda i: self.with_const(i) is not None)
            if a is not None and self.sole(self.out(m), a):
                found.append(a)
        return found

    def tail(self, t, x):
        """Add(t, 1), then the products with x and 0.5 in any order."""
        nodes = self.nodes

        def add1(i):
            wc = self.with_const(i, 1.0)
            return wc is not None and wc[0] == t
        add = self.consumer(t, "Add", add1)
        if add is None:
            return []
        found = [add]
        a = self.out(add)
        if not x:
            return found
        for m1 in self.g.consumers.get(a, []):
            if not self.is_op(m1, "Mul", 2):
                continue
            o = self.other(m1, a)
            if o is None or o == a:
                continue
            if o == x:
                m2 = self.consumer(self.out(m1), "Mul", lambda i: self.with_const(i, 0.5) is not None)
                if m2 is not None:
                    return found + [m1, m2]
            elif o in self.g.const and self.near(o, 0.5):
                m2 = self.consumer(self.out(m1), "Mul", lambda i: self.other(i, self.out(m1)) == x)
                if m2 is not None:
                    return found + [m1, m2]
            else:
                h = self.g.producer.get(o)
                if h is not None and self.is_op(h, "Mul", 2):
                    wc = self.with_const(h, 0.5)
                    if wc is not None and wc[0] == x:
                        return found + [h, m1]
        return found

    def erf_gelu(self, e):
        n, found = self.nodes[e], [e]
        if not n.inputs or not n.outputs:
            return found
        x = ""
        p = self.g.producer.get(n.inputs[0])
        if p is not None:
            if self.is_op(p, "Div", 2):
                wc = self.with_const(p, math.sqrt(2))
                if wc is not None and wc[0] == self.nodes[p].inputs[0]:
                    x = wc[0]
            elif self.is_op(p, "Mul", 2):
                wc = self.with_const(p, 1 / math.sqrt(2))
                if wc is not None:
                    x = wc[0]
            if x:
                found.append(p)
        return found + self.tail(self.out(e), x)

    def cube(self, v, x):
        p = self.g.producer.get(v)
        if p is None:
            return []
        if self.is_op(p, "Pow", 2):
            wc = self.with_const(p, 3.0)
            return [p] if wc is not None and wc[0] == x and self.nodes[p].inputs[0] == x else []
        if not self.is_op(p, "Mul", 2):
            return []
        sq = self.other(p, x)
        if sq is None:
            return []
        q = self.g.producer.get(sq)
        if q is None or not self.is_op(q, "Mul", 2) or self.nodes[q].inputs != [x, x]:
            return []
        return [p, q]

    def tanh_gelu(self, t):
        n = self.nodes[t]
        if len(n.inputs) != 1 or not n.outputs:
            return []
        scale = self.g.producer.get(n.inputs[0])
        if scale is None or not self.is_op(scale, "Mul", 2):
            return []
        wc = self.with_const(scale, math.sqrt(2 / math.pi))
        if wc is None:
            return []
        s = self.g.producer.get(wc[0])
        if s is None or not self.is_op(s, "Add", 2):
            return []
        for k, x in enumerate(self.nodes[s].inputs):
            cubic = self.g.producer.get(self.nodes[s].inputs[1 - k])
            if cubic is None or not self.is_op(cubic, "Mul", 2):
                continue
            wc = self.with_const(cubic, 0.044715)
            if wc is None:
                continue
            cn = self.cube(wc[0], x)
            if not cn:
                continue
            return [t, scale, s, cubic] + cn + self.tail(self.out(t), x)
        return []


def classes(g):
    nodes = g.nodes
    cls = []
    for n in nodes:
        cls.append("Linear" if n.op in LINEAR_OPS else "LayerNorm" if n.op in LAYERNORM_OPS else
                   "Softmax" if n.op == "Softmax" else "GELU" if n.op in GELU_OPS else
                   "Dropout" if n.op == "Dropout" else "Other")
    pt = Patterns(g)
    for i, n in enumerate(nodes):
        if not n.outputs or g.producer.get(n.outputs[0]) != i:
            continue
        found, c = [], None
        if n.op == "ReduceMean":
            found, c = pt.layer_norm(i), "LayerNorm"
        elif n.op == "Erf":
            found, c = pt.erf_gelu(i), "GELU"
        elif n.op == "Tanh":
            found, c = pt.tanh_gelu(i), "GELU"
        for k in found:
            cls[k] = c
    for i, n in enumerate(nodes):
        if n.op != "Add" or cls[i] != "Other" or len(n.inputs) != 2:
            continue
        for k in (0, 1):
            p = g.producer.get(n.inputs[k])
            if p is not None and nodes[p].op in LINEAR_OPS and n.inputs[1 - k] in g.const:
                cls[i] = "Linear"
    return cls


# ---------------------------------------------------------------- modes


def select(g):
    cls = classes(g)
    nodes = g.nodes
    first_out = g.outputs[0][0] if g.outputs else None
    # Traced: first output non-empty, FLOAT, not a constant, not a Constant node.
    traced = [bool(n.outputs) and bool(n.outputs[0]) and n.op != "Constant" and g.types.get(n.outputs[0]) == FLOAT
              and n.outputs[0] not in g.const for n in nodes]

    # production: the node producing the first graph output (any position), and
    # every LayerNorm node whose first output is a graph output or feeds a node
    # of another class.
    outputs = {name for name, _ in g.outputs}
    prod = set()
    for i, n in enumerate(nodes):
        if first_out is not None and first_out in n.outputs:
            prod.add(i)
        if cls[i] != "LayerNorm" or not n.outputs or not n.outputs[0]:
            continue
        if n.outputs[0] in outputs or any(cls[c] != "LayerNorm" for c in g.consumers.get(n.outputs[0], [])):
            prod.add(i)

    res = set(prod)

    def from_(v):
        """The node whose first output is v, when v is not a constant and the
        node not of class LayerNorm."""
        p = g.first_output_of(v) if v else None
        if p is None or v in g.const or cls[p] == "LayerNorm":
            return None
        return p

    for i, n in enumerate(nodes):
        if cls[i] == "LayerNorm":
            for v in n.inputs:
                p = from_(v)
                if p is None:
                    continue
                if nodes[p].op == "Add" and cls[p] == "Other":
                    for w in nodes[p].inputs:
                        q = from_(w)
                        if q is not None:
                            res.add(q)
                else:
                    res.add(p)
        if n.op == "Softmax" and first_out is not None and n.outputs and n.outputs[0] == first_out and n.inputs:
            p = from_(n.inputs[0])
            if p is not None:
                res.add(p)

    def keep(s):
        return sorted(i for i in s if traced[i])

    return {"classes": cls, "full": keep(range(len(nodes))), "production": keep(prod), "residual": keep(res)}


# ---------------------------------------------------------------- model surgery


def rewrite(model, graph_fn):
    """model bytes with the graph (field 7) replaced by graph_fn(graph bytes)."""
    out = bytearray()
    for num, wt, v, s, e in fields(model):
        out += enc_field(7, graph_fn(v)) if num == 7 and wt == 2 else model[s:e]
    return bytes(out)


def value_info_bytes(name, elem):
    tensor_type = enc_varint(1 << 3 | 0) + enc_varint(elem)
    return enc_field(1, name.encode()) + enc_field(2, enc_field(1, tensor_type))


def strip_softmax(model):
    g = Graph(model)
    last = g.producer.get(g.outputs[0][0])
    if last is None or g.nodes[last].op != "Softmax":
        raise ProtoError("the first output is not a Softmax's")
    logits = g.nodes[last].inputs[0]

    def fn(gb):
        out, k, o = bytearray(), 0, 0
        for num, wt, v, s, e in fields(gb):
            if num == 1 and wt == 2:
                if k != last:
                    out += gb[s:e]
                k += 1
            elif num == 12 and wt == 2:
                out += enc_field(12, value_info_bytes(logits, FLOAT)) if o == 0 else gb[s:e]
                o += 1
            else:
                out += gb[s:e]
        return bytes(out)
    return rewrite(model, fn)


def add_softmax(model):
    g = Graph(model)
    logits = g.outputs[0][0]
    probs = logits + "_probabilities"
    axis = enc_field(1, b"axis") + enc_varint(3 << 3 | 0) + enc_varint((1 << 64) - 1) + enc_varint(20 << 3) + \
        enc_varint(2)
    node = enc_field(1, logits.encode()) + enc_field(2, probs.encode()) + enc_field(3, b"/final/Softmax") + \
        enc_field(4, b"Softmax") + enc_field(5, axis)

    def fn(gb):
        out, o, done = bytearray(), 0, False
        for num, wt, v, s, e in fields(gb):
            if num == 12 and wt == 2:
                if not done:
                    out += enc_field(1, node)
                    done = True
                out += enc_field(12, value_info_bytes(probs, FLOAT)) if o == 0 else gb[s:e]
                o += 1
            else:
                out += gb[s:e]
        return bytes(out)
    return rewrite(model, fn)


# ---------------------------------------------------------------- measurements


class Refused(ValueError):
    """A measurements file FORMATS.md does not allow, or that contradicts its model."""


KERNEL_PATHS = ("avx512", "avx2", "avx", "sse4.2", "sse2", "neon")
CLASSES = ("Linear", "LayerNorm", "GELU", "Softmax", "Dropout", "Other")
MODES = ("full", "production", "residual")


def node_id(n):
    """BOUNDED.md: the node name, or its first output's name when unnamed."""
    return n.name or (n.outputs[0] if n.outputs else "")


def _finite(v, what):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v in (float("inf"), float("-inf")):
        raise Refused("%s: not a finite number" % what)


def _int(v, what, lo, hi):
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise Refused("%s: want an integer in [%d, %d]" % (what, lo, hi))
    return v


def _obj(v, what, required, optional=()):
    if not isinstance(v, dict):
        raise Refused("%s: want an object" % what)
    for k in v:
        if k not in required and k not in optional:
            raise Refused("%s: unknown member %s" % (what, k))
    for k in required:
        if k not in v:
            raise Refused("%s: missing member %s" % (what, k))


def _hash(v, what):
    if not isinstance(v, str) or len(v) != 71 or not v.startswith("sha256:") or \
            any(c not in "0123456789abcdef" for c in v[7:]):
        raise Refused("%s: want sha256:<64 lowercase hex>" % what)


def _no_duplicates(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise Refused("duplicate member %s" % k)
        d[k] = v
    return d


def measurements(data, models):
    """Reads a svc.calibration/v1 file (FORMATS.md "Calibration measurements")
    and checks each model it measures against that model's graph: the same
    full-mode operators (node ids and classes, in trace order) and, for each
    mode, the same selection. models maps onnx_model_hash to model bytes.
    Returns a summary; raises Refused."""
    try:
        m = json.loads(data, object_pairs_hook=_no_duplicates,
                       parse_constant=lambda c: (_ for _ in ()).throw(Refused("%s is not JSON" % c)))
    except json.JSONDecodeError as e:
        raise Refused("not JSON: %s" % e) from None
    _obj(m, "measurements", ("schema", "drift_definition", "gpu_class", "machine", "models"))
    if m["schema"] != "svc.calibration/v1":
        raise Refused("schema: not svc.calibration/v1")
    if m["drift_definition"] != "svc.drift/v2":
        raise Refused("drift_definition: not svc.drift/v2")
    if m["gpu_class"] not in ("cpu", "a10g", "a100", "h100"):
        raise Refused("gpu_class: not a GPU class")
    mach = m["machine"]
    _obj(mach, "machine", ("cpu", "kernel_path", "passes"))
    if not isinstance(mach["cpu"], str) or not mach["cpu"] or mach["kernel_path"] not in KERNEL_PATHS:
        raise Refused("machine: cpu must be a non-empty string, kernel_path one of %s" % ", ".join(KERNEL_PATHS))
    passes = _int(mach["passes"], "machine.passes", 1, 2**53 - 1)
    if not isinstance(m["models"], list) or not 1 <= len(m["models"]) <= 64:
        raise Refused("models: want 1 to 64")
    out = []
    for k, x in enumerate(m["models"]):
        w = "models[%d]" % k
        _obj(x, w, ("onnx_model_hash", "operator_counts", "nodes", "classes", "selected", "inputs", "passes"))
        _hash(x["onnx_model_hash"], w + ".onnx_model_hash")
        oc = x["operator_counts"]
        _obj(oc, w + ".operator_counts", ("full", "production"), ("residual",))
        for mode, n in oc.items():
            _int(n, w + ".operator_counts." + mode, 1, 2**32)
        nodes, classes = x["nodes"], x["classes"]
        if not isinstance(nodes, list) or not nodes or not all(isinstance(v, str) for v in nodes):
            raise Refused(w + ".nodes: want n >= 1 node names")
        if not isinstance(classes, list) or len(classes) != len(nodes) or any(c not in CLASSES for c in classes):
            raise Refused(w + ".classes: want one operator class per node")
        sel = x["selected"]
        _obj(sel, w + ".selected", ("full", "production"), ("residual",))
        if set(sel) != set(oc):
            raise Refused(w + ".selected: the modes of operator_counts, no other")
        for mode, idx in sel.items():
            if not isinstance(idx, list) or len(idx) != oc[mode] or \
                    any(_int(i, w + ".selected." + mode, 0, len(nodes) - 1) is None for i in idx) or \
                    any(a >= b for a, b in zip(idx, idx[1:])):
                raise Refused("%s.selected.%s: want operator_counts.%s increasing indices into nodes" % (w, mode, mode))
        if sel["full"] != list(range(len(nodes))):
            raise Refused(w + ".selected.full: every node")
        if not isinstance(x["inputs"], list) or len(x["inputs"]) != passes:
            raise Refused(w + ".inputs: one per pass")
        for i, h in enumerate(x["inputs"]):
            _hash(h, "%s.inputs[%d]" % (w, i))
        if not isinstance(x["passes"], list) or len(x["passes"]) != passes:
            raise Refused(w + ".passes: one per pass")
        for i, ps in enumerate(x["passes"]):
            q = "%s.passes[%d]" % (w, i)
            _obj(ps, q, ("reference", "production"))
            if not isinstance(ps["reference"], list) or len(ps["reference"]) != len(nodes):
                raise Refused(q + ".reference: one [mean, rms, scale] per node")
            for t in ps["reference"]:
                if not isinstance(t, list) or len(t) != 3:
                    raise Refused(q + ".reference: want [mean, rms, scale]")
                for v in t:
                    _finite(v, q + ".reference")
            _obj(ps["production"], q + ".production", tuple(oc))
            for mode in oc:
                st = ps["production"][mode]
                if not isinstance(st, list) or len(st) != oc[mode] or \
                        any(not isinstance(t, list) or len(t) != 2 for t in st):
                    raise Refused("%s.production.%s: one [mean, rms] per selected operator" % (q, mode))
                for t in st:
                    for v in t:
                        _finite(v, q + ".production." + mode)
        # against the model
        model = models.get(x["onnx_model_hash"])
        if model is None:
            out.append({"onnx_model_hash": x["onnx_model_hash"], "checked": False})
            continue
        g = Graph(model)
        r = select(g)
        full = r["full"]
        want_nodes = [node_id(g.nodes[i]) for i in full]
        want_classes = [r["classes"][i] for i in full]
        if nodes != want_nodes:
            raise Refused(w + ".nodes: not the model's full-mode operators in trace order")
        if classes != want_classes:
            bad = [j for j in range(len(nodes)) if classes[j] != want_classes[j]]
            raise Refused("%s.classes: node %s is %s, BOUNDED.md says %s" % (w, nodes[bad[0]], classes[bad[0]],
                                                                           want_classes[bad[0]]))
        pos = {i: j for j, i in enumerate(full)}
        for mode in sel:
            want = [pos[i] for i in r[mode]]
            if sel[mode] != want:
                raise Refused("%s.selected.%s: %s, BOUNDED.md's rules select %s" % (w, mode, sel[mode], want))
        out.append({"onnx_model_hash": x["onnx_model_hash"], "checked": True,
                    "operator_counts": {mode: len(v) for mode, v in sel.items()}})
    return out


# ---------------------------------------------------------------- trace files


def check_trace(data, model):
    """A trace file (BOUNDED.md "The trace") against its model: the operators
    are the nodes its mode selects, in node order, each record's index its
    position, node id, op_type and class the model's; the operator count and
    the RFC 6962 Merkle root over the records' RFC 8785 forms are the file's.
    Returns a summary; raises Refused."""
    import hashlib
    import sjson
    t = sjson.loads(data.decode("utf-8"))
    if not isinstance(t, dict) or t.get("schema") != "svc.trace/v1":
        raise Refused("not a svc.trace/v1 file")
    mode = t.get("mode")
    if mode not in MODES:
        raise Refused("mode: not one of %s" % ", ".join(MODES))
    if t.get("onnx_model_hash") != "sha256:" + hashlib.sha256(model).hexdigest():
        raise Refused("onnx_model_hash: not the model's")
    g = Graph(model)
    r = select(g)
    ops = t.get("operators")
    if not isinstance(ops, list) or len(ops) != len(r[mode]):
        raise Refused("operators: %s, the %s mode selects %d" % (len(ops) if isinstance(ops, list) else "absent",
                                                                mode, len(r[mode])))
    if not isinstance(t.get("operator_count"), sjson.Num) or t["operator_count"].value != len(ops):
        raise Refused("operator_count: not the number of operators")
    leaves = []
    for k, (op, i) in enumerate(zip(ops, r[mode])):
        n = g.nodes[i]
        want = {"index": k, "node": node_id(n), "op_type": n.op, "class": r["classes"][i]}
        if not isinstance(op, dict) or set(op) != set(want) | {"mean", "rms"}:
            raise Refused("operators[%d]: want exactly index, node, op_type, class, mean, rms" % k)
        got = {key: (op[key].value if isinstance(op[key], sjson.Num) else op[key]) for key in want}
        if got != want:
            raise Refused("operators[%d]: %s, the rules select %s" % (k, got, want))
        leaves.append(sjson.jcs(op))

    from svcverify import merkle  # RFC 6962, the verifier's own
    root = "sha256:" + merkle(leaves).hex()
    if t.get("merkle_root") != root:
        raise Refused("merkle_root: the records hash to %s" % root)
    return {"mode": mode, "operators": len(ops), "merkle_root": root}


def main(argv):
    if len(argv) == 2 and argv[0] == "select":
        with open(argv[1], "rb") as f:
            print(json.dumps(select(Graph(f.read()))))
        return 0
    if len(argv) == 1 and argv[0] == "select-batch":
        for line in sys.stdin:
            line = line.strip()
            if not line:
                continue
            try:
                with open(line, "rb") as f:
                    r = select(Graph(f.read()))
                r["file"] = line
            except (OSError, ProtoError, UnicodeDecodeError, struct.error) as e:
                r = {"file": line, "error": str(e)}
            print(json.dumps(r), flush=True)
        return 0
    if len(argv) == 3 and argv[0] == "trace":
        with open(argv[1], "rb") as f:
            data = f.read()
        with open(argv[2], "rb") as f:
            model = f.read()
        try:
            print(json.dumps({"ok": True, "trace": check_trace(data, model)}))
        except (Refused, ProtoError, ValueError) as e:
            print(json.dumps({"ok": False, "error": str(e)}))
            return 1
        return 0
    if len(argv) >= 2 and argv[0] == "measurements":
        import hashlib
        models = {}
        for path in argv[2:]:
            with open(path, "rb") as f:
                b = f.read()
            models["sha256:" + hashlib.sha256(b).hexdigest()] = b
        with open(argv[1], "rb") as f:
            data = f.read()
        try:
            print(json.dumps({"ok": True, "models": measurements(data, models)}))
        except (Refused, ProtoError) as e:
            print(json.dumps({"ok": False, "error": str(e)}))
            return 1
        return 0
    if len(argv) == 3 and argv[0] in ("strip-softmax", "add-softmax"):
        with open(argv[1], "rb") as f:
            m = f.read()
        out = strip_softmax(m) if argv[0] == "strip-softmax" else add_softmax(m)
        with open(argv[2], "wb") as f:
            f.write(out)
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
