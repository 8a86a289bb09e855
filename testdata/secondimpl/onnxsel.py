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

The choices the docs left open, and what this implementation does, are listed
in docs/INTEROP.md ("Trace node selection").
"""

import json
import math
import os
import struct
import sys

sys.dont_write_bytecode = True

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
            elif num == 11:
                self.inputs.append(value_info(v))
            elif num == 12:
                self.outputs.append(value_info(v))
            elif num == 13:
                n, e = value_info(v)
                if e:
                    self.declared[n] = e
        self.producer = {}
        for i, n in enumerate(self.nodes):
            for o in n.outputs:
                if o:
                    self.producer[o] = i
        self.consumers = {}
        for i, n in enumerate(self.nodes):
            for x in n.inputs:
                if x:
                    self.consumers.setdefault(x, []).append(i)
        self._constants()
        self._types()

    # "Constants are computed from initializers and Constant nodes only."
    def _constants(self):
        self.const = set(self.inits)
        for n in self.nodes:
            ins = [x for x in n.inputs if x]
            if n.op == "Constant" and n.standard() or (ins and all(x in self.const for x in ins)):
                self.const.update(o for o in n.outputs if o)

    def _types(self):
        t = {}
        for name, tensor in self.inits.items():
            t[name] = tensor.dtype
        for name, e in self.inputs:
            if e and name not in t:
                t[name] = e
        cmp_ops = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "Xor",
                   "IsNaN", "IsInf"}
        int_ops = {"Shape", "Size", "ArgMax", "ArgMin", "NonZero", "NonMaxSuppression", "TopK"}
        for n in self.nodes:
            a = n.attrs
            if not n.standard():
                out = t.get(n.inputs[0]) if n.inputs and n.inputs[0] else 0
            elif n.op == "Cast":
                out = a["to"].i if "to" in a else 0
            elif n.op == "CastLike":
                out = t.get(n.inputs[1], 0) if len(n.inputs) > 1 else 0
            elif n.op == "Constant":
                if "value" in a and a["value"].t is not None:
                    out = a["value"].t.dtype
                elif "value_float" in a or "value_floats" in a:
                    out = FLOAT
                elif "value_int" in a or "value_ints" in a:
                    out = INT64
                else:
                    out = 0
            elif n.op == "ConstantOfShape":
                out = a["value"].t.dtype if "value" in a and a["value"].t is not None else FLOAT
            elif n.op in cmp_ops:
                out = BOOL
            elif n.op in int_ops:
                out = INT64
            elif n.op == "Where":
                out = t.get(n.inputs[1], 0) if len(n.inputs) > 1 else 0
            else:
                out = next((t[x] for x in n.inputs if x and t.get(x)), 0)
            for k, o in enumerate(n.outputs):
                if not o:
                    continue
                if o in self.declared:
                    t[o] = self.declared[o]
                elif n.op == "TopK" and k == 0:
                    t[o] = t.get(n.inputs[0], 0)
                else:
                    t[o] = out
        for name, e in self.outputs:
            if e:
                t[name] = e
        self.types = t

    def first_output_of(self, value):
        """The node whose FIRST output is value, or None."""
        p = self.producer.get(value)
        if p is not None and self.nodes[p].outputs and self.nodes[p].outputs[0] == value:
            return p
        return None

    def scalar(self, value):
        """A stored constant's single value (initializer or Constant node), else None."""
        if value in self.inits:
            vs = self.inits[value].values()
        else:
            p = self.producer.get(value)
            if p is None or self.nodes[p].op != "Constant":
                return None
            a = self.nodes[p].attrs
            if "value" in a and a["value"].t is not None:
                vs = a["value"].t.values()
            elif "value_float" in a:
                vs = [a["value_float"].f]
            else:
                return None
        if vs is None or len(vs) != 1:
            return None
        return float(vs[0])

    def const_is(self, value, want, tol=1e-6):
        """A constant whose value, where the model stores it, is want."""
        if value not in self.const:
            return False
        v = self.scalar(value)
        return v is None or abs(v - want) <= tol * max(1.0, abs(want))


# ---------------------------------------------------------------- classes

LINEAR_OPS = {"MatMul", "Gemm", "MatMulInteger", "QLinearMatMul", "FusedMatMul", "FusedGemm", "QGemm",
              "MatMulIntegerToFloat", "DynamicQuantizeMatMul", "MatMulNBits", "MatMulFpQ4", "MatMulBnb4",
              "GemmFastGelu", "QuickGeluMatMul"}
LAYERNORM_OPS = {"LayerNormalization", "SkipLayerNormalization", "SimplifiedLayerNormalization",
                 "SkipSimplifiedLayerNormalization", "EmbedLayerNormalization"}
GELU_OPS = {"Gelu", "FastGelu", "BiasGelu", "QuickGelu"}


def classes(g):
    nodes = g.nodes
    cls = ["Other"] * len(nodes)
    for i, n in enumerate(nodes):
        if n.op in LINEAR_OPS:
            cls[i] = "Linear"
        elif n.op in LAYERNORM_OPS:
            cls[i] = "LayerNorm"
        elif n.op in GELU_OPS:
            cls[i] = "GELU"
        elif n.op == "Softmax":
            cls[i] = "Softmax"
        elif n.op == "Dropout":
            cls[i] = "Dropout"

    def node_of(value, op):
        p = g.first_output_of(value)
        return p if p is not None and nodes[p].op == op else None

    def other(n, value):
        """The other input of a binary node, when value is one of its two."""
        if len(n.inputs) != 2:
            return None
        if n.inputs[0] == value:
            return n.inputs[1]
        if n.inputs[1] == value:
            return n.inputs[0]
        return None

    # Linear: an Add of a constant bias to a MatMul/Gemm output, either order.
    for i, n in enumerate(nodes):
        if n.op == "Add" and len(n.inputs) == 2:
            for a, b in ((0, 1), (1, 0)):
                p = g.first_output_of(n.inputs[a])
                if p is not None and nodes[p].op in ("MatMul", "Gemm") and n.inputs[b] in g.const:
                    cls[i] = "Linear"

    # LayerNorm, decomposed: ReduceMean -> Sub -> Pow(2) -> ReduceMean ->
    # Add(eps) -> Sqrt -> Div -> Mul(gamma) -> Add(beta). Matched from the Div.
    for i, n in enumerate(nodes):
        if n.op != "Div" or len(n.inputs) != 2:
            continue
        sub = node_of(n.inputs[0], "Sub")
        sq = node_of(n.inputs[1], "Sqrt")
        if sub is None or sq is None:
            continue
        x, m = nodes[sub].inputs if len(nodes[sub].inputs) == 2 else (None, None)
        rm1 = node_of(m, "ReduceMean")
        if rm1 is None or nodes[rm1].inputs[:1] != [x]:
            continue
        add_eps = node_of(nodes[sq].inputs[0], "Add")
        if add_eps is None:
            continue
        rm2 = None
        for a, b in ((0, 1), (1, 0)):
            r = node_of(nodes[add_eps].inputs[a], "ReduceMean") if len(nodes[add_eps].inputs) == 2 else None
            if r is not None and nodes[add_eps].inputs[b] in g.const:
                rm2 = r
        if rm2 is None:
            continue
        pw = node_of(nodes[rm2].inputs[0], "Pow")
        if pw is None or nodes[pw].inputs[0] != nodes[sub].outputs[0] or not g.const_is(nodes[pw].inputs[1], 2.0):
            continue
        # then Mul(gamma) and Add(beta), each with a constant, either order
        mul = add = None
        for c in g.consumers.get(n.outputs[0], []):
            o = other(nodes[c], n.outputs[0])
            if nodes[c].op == "Mul" and o in g.const:
                mul = c
        if mul is not None:
            for c in g.consumers.get(nodes[mul].outputs[0], []):
                o = other(nodes[c], nodes[mul].outputs[0])
                if nodes[c].op == "Add" and o in g.const:
                    add = c
        if mul is None or add is None:
            continue
        for k in (rm1, sub, pw, rm2, add_eps, sq, i, mul, add):
            cls[k] = "LayerNorm"
        g.ln_terminal.add(add)

    # GELU, Erf pattern: x*0.5*(1+erf(x/sqrt2)) in any order.
    for i, n in enumerate(nodes):
        if n.op != "Erf":
            continue
        d = g.first_output_of(n.inputs[0])
        if d is None:
            continue
        dn = nodes[d]
        if dn.op == "Div" and len(dn.inputs) == 2 and g.const_is(dn.inputs[1], math.sqrt(2)):
            x = dn.inputs[0]
        elif dn.op == "Mul" and len(dn.inputs) == 2:
            x = None
            for a, b in ((0, 1), (1, 0)):
                if g.const_is(dn.inputs[b], 1 / math.sqrt(2)):
                    x = dn.inputs[a]
        else:
            continue
        if x is None:
            continue
        add1 = None
        for c in g.consumers.get(n.outputs[0], []):
            if nodes[c].op == "Add" and g.const_is(other(nodes[c], n.outputs[0]), 1.0):
                add1 = c
        if add1 is None:
            continue
        found = gelu_muls(g, x, nodes[add1].outputs[0])
        if found is None:
            continue
        for k in (d, i, add1) + found:
            cls[k] = "GELU"

    # GELU, tanh approximation: x*0.5*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3))).
    for i, n in enumerate(nodes):
        if n.op != "Tanh":
            continue
        m1 = g.first_output_of(n.inputs[0])
        if m1 is None or nodes[m1].op != "Mul":
            continue
        inner = None
        for a, b in ((0, 1), (1, 0)):
            if g.const_is(nodes[m1].inputs[b], math.sqrt(2 / math.pi)):
                inner = nodes[m1].inputs[a]
        ad = g.first_output_of(inner) if inner else None
        if ad is None or nodes[ad].op != "Add":
            continue
        got = None
        for a, b in ((0, 1), (1, 0)):
            x = nodes[ad].inputs[a]
            c = g.first_output_of(nodes[ad].inputs[b])
            if c is None or nodes[c].op != "Mul":
                continue
            for p, q in ((0, 1), (1, 0)):
                if not g.const_is(nodes[c].inputs[q], 0.044715):
                    continue
                cube = g.first_output_of(nodes[c].inputs[p])
                if cube is None:
                    continue
                cn = nodes[cube]
                if cn.op == "Pow" and cn.inputs[0] == x and g.const_is(cn.inputs[1], 3.0):
                    got = (x, (cube, c))
                elif cn.op == "Mul" and x in cn.inputs:
                    sq = g.first_output_of(other(cn, x)) if other(cn, x) is not None else None
                    if sq is not None and nodes[sq].op == "Mul" and nodes[sq].inputs == [x, x]:
                        got = (x, (sq, cube, c))
        if got is None:
            continue
        x, cube_nodes = got
        add1 = None
        for c in g.consumers.get(n.outputs[0], []):
            if nodes[c].op == "Add" and g.const_is(other(nodes[c], n.outputs[0]), 1.0):
                add1 = c
        if add1 is None:
            continue
        found = gelu_muls(g, x, nodes[add1].outputs[0])
        if found is None:
            continue
        for k in cube_nodes + (ad, m1, i, add1) + found:
            cls[k] = "GELU"
    return cls


def gelu_muls(g, x, one_plus):
    """The two multiplications of x, 0.5 and (1 + ...), in any order: returns
    their node indices, or None."""
    nodes = g.nodes

    def muls_of(value):
        return [c for c in g.consumers.get(value, []) if nodes[c].op == "Mul" and len(nodes[c].inputs) == 2]

    def operands(k):
        return nodes[k].inputs

    for m in muls_of(one_plus):
        o = operands(m)[1] if operands(m)[0] == one_plus else operands(m)[0]
        if o == x:  # (x * (1+e)) * 0.5
            for m2 in muls_of(nodes[m].outputs[0]):
                o2 = [v for v in operands(m2) if v != nodes[m].outputs[0]]
                if o2 and g.const_is(o2[0], 0.5):
                    return (m, m2)
        elif g.const_is(o, 0.5):  # ((1+e) * 0.5) * x
            for m2 in muls_of(nodes[m].outputs[0]):
                if x in operands(m2):
                    return (m, m2)
        else:  # (x * 0.5) * (1+e)
            p = g.first_output_of(o)
            if p is not None and nodes[p].op == "Mul" and x in operands(p):
                h = operands(p)[1] if operands(p)[0] == x else operands(p)[0]
                if g.const_is(h, 0.5):
                    return (p, m)
    return None


# ---------------------------------------------------------------- modes


def select(g):
    g.ln_terminal = set()
    cls = classes(g)
    nodes = g.nodes
    # Traced: a node whose first output is a 32-bit float tensor and not a
    # constant (computed from initializers and Constant nodes only).
    float_out = [bool(n.outputs) and bool(n.outputs[0]) and g.types.get(n.outputs[0]) == FLOAT
                 and n.outputs[0] not in g.const for n in nodes]
    first_out = g.outputs[0][0] if g.outputs else None
    out_node = g.producer.get(first_out)

    prod = set()
    for i, n in enumerate(nodes):
        if cls[i] == "LayerNorm" and n.op in LAYERNORM_OPS:
            prod.add(i)
    prod |= g.ln_terminal
    if out_node is not None:
        prod.add(out_node)

    res = set(prod)

    def producer_ok(v):
        p = g.first_output_of(v)
        if p is None or v in g.const:
            return None
        return p

    for i, n in enumerate(nodes):
        if cls[i] != "LayerNorm":
            continue
        for v in n.inputs:
            if not v:
                continue
            p = producer_ok(v)
            if p is None or cls[p] == "LayerNorm":
                continue
            if nodes[p].op == "Add" and cls[p] == "Other":
                for w in nodes[p].inputs:
                    q = producer_ok(w) if w else None
                    if q is not None and cls[q] != "LayerNorm":
                        res.add(q)
            else:
                res.add(p)
    if out_node is not None and nodes[out_node].op == "Softmax" and nodes[out_node].outputs[0] == first_out:
        p = producer_ok(nodes[out_node].inputs[0])
        if p is not None:
            res.add(p)

    def keep(s):
        return sorted(i for i in s if float_out[i])

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
