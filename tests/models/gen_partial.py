"""Writes partial.onnx: a small model the EP runs only in part, each node it
leaves for a different kind of reason, for hipdnn-ep-run's placement report
(tests/run_tool.cmake):

  conv           Conv                    on the EP
  hardmax_op     Hardmax                 no such op in the EP
  add            Add(hardmax, conv)      on the EP
  resize_attr    Resize antialias=1      an attribute the EP does not run
  relu_dtype     Relu on int32           a type the EP does not run

usage: gen_partial.py OUT.onnx (opset 18: Resize's antialias)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = sys.argv[1]
    rs = np.random.RandomState(7)
    w = numpy_helper.from_array((rs.randn(4, 3, 3, 3) * 0.3).astype(np.float32), "W")
    scales = numpy_helper.from_array(np.array([1, 1, 0.5, 0.5], np.float32), "scales")
    nodes = [
        helper.make_node("Conv", ["X", "W"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Hardmax", ["c"], ["h"], name="hardmax_op", axis=1),
        helper.make_node("Add", ["h", "c"], ["Y"], name="add"),
        helper.make_node("Resize", ["c", "", "scales"], ["R"], name="resize_attr", mode="linear", antialias=1),
        helper.make_node("Relu", ["ids"], ["ids_relu"], name="relu_dtype"),
    ]
    graph = helper.make_graph(
        nodes, "partial",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 3, 8, 8]),
         helper.make_tensor_value_info("ids", TensorProto.INT32, ["N", 4])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", 4, 8, 8]),
         helper.make_tensor_value_info("R", TensorProto.FLOAT, ["N", 4, 4, 4]),
         helper.make_tensor_value_info("ids_relu", TensorProto.INT32, ["N", 4])],
        [w, scales])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8  # ORT 1.29 and 1.30 read it; Debian's onnx 1.12 writes it
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    onnx.save(model, out)
    print(f"gen_partial.py: wrote {out}")


if __name__ == "__main__":
    main()
