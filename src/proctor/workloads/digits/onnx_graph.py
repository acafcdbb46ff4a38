"""The digits network as an ONNX graph, built from the numpy weights with `onnx.helper`.

FP32: MatMul -> Add -> Relu per layer, then ArgMax. Quantized: the QDQ form ONNX Runtime runs
with integer kernels - each layer input is clipped to the calibrated range, QuantizeLinear (uint8,
zero point 0) and DequantizeLinear; each weight is an int8 initializer behind DequantizeLinear.
The Clip makes the 4-bit variant exact in 8-bit storage (inputs never exceed 2**bits - 1). The
graph outputs `label` (int64[n]) and `logits` (float32[n, 10]).
"""

from __future__ import annotations

import numpy as np

from proctor.workloads.digits.model import MLP, QuantizedMLP

OPSET = 13
INPUT, LOGITS, LABEL = "x", "logits", "label"


def to_onnx(model: MLP | QuantizedMLP) -> bytes:
    """A serialized ONNX model computing `model.logits` and its argmax."""
    from onnx import TensorProto, checker, helper, numpy_helper

    nodes, inits = [], []

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(value, name))
        return name

    weights = model.qweights if isinstance(model, QuantizedMLP) else model.weights
    h = INPUT
    last = len(weights) - 1
    for i, (w, b) in enumerate(zip(weights, model.biases, strict=True)):
        if isinstance(model, QuantizedMLP):
            s_x = np.float32(model.input_scales[i])
            lo = const(f"x{i}_lo", np.array(0.0, np.float32))
            hi = const(f"x{i}_hi", np.array(np.float32(model.x_max) * s_x, np.float32))
            sx = const(f"x{i}_scale", np.array(s_x, np.float32))
            zx = const(f"x{i}_zero", np.array(0, np.uint8))
            nodes += [
                helper.make_node("Clip", [h, lo, hi], [f"x{i}_c"]),
                helper.make_node("QuantizeLinear", [f"x{i}_c", sx, zx], [f"x{i}_q"]),
                helper.make_node("DequantizeLinear", [f"x{i}_q", sx, zx], [f"x{i}_dq"]),
            ]
            wq = const(f"W{i}_q", w.astype(np.int8))
            sw = const(f"W{i}_scale", np.array(model.weight_scales[i], np.float32))
            zw = const(f"W{i}_zero", np.array(0, np.int8))
            nodes.append(helper.make_node("DequantizeLinear", [wq, sw, zw], [f"W{i}"]))
            h, wname = f"x{i}_dq", f"W{i}"
        else:
            wname = const(f"W{i}", np.asarray(w, np.float32))
        bname = const(f"b{i}", np.asarray(b, np.float32))
        out = LOGITS if i == last else f"h{i}"
        nodes.append(helper.make_node("MatMul", [h, wname], [f"mm{i}"]))
        nodes.append(helper.make_node("Add", [f"mm{i}", bname], [out if i == last else f"pre{i}"]))
        if i < last:
            nodes.append(helper.make_node("Relu", [f"pre{i}"], [out]))
        h = out
    nodes.append(helper.make_node("ArgMax", [LOGITS], [LABEL], axis=1, keepdims=0))
    n_in, n_out = weights[0].shape[0], weights[-1].shape[1]
    graph = helper.make_graph(
        nodes,
        f"digits-{model.name}",
        [helper.make_tensor_value_info(INPUT, TensorProto.FLOAT, ["n", n_in])],
        [
            helper.make_tensor_value_info(LABEL, TensorProto.INT64, ["n"]),
            helper.make_tensor_value_info(LOGITS, TensorProto.FLOAT, ["n", n_out]),
        ],
        initializer=inits,
    )
    proto = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="proctor.workloads.digits"
    )
    proto.ir_version = 8  # readable by every onnxruntime >= 1.10
    checker.check_model(proto)
    return proto.SerializeToString()
