"""Runs one torchvision model (or an .onnx file) through the EP a few times,
for a kernel profiler to wrap (GPU machine):

    ncu --clock-control none --metrics gpu__time_duration.sum \
        python3 bench/kernels.py mobilenet_v2 32
    python3 bench/kernels.py /tmp/hipdnn-tx/bert.onnx 8 2     (after bench/tx_bench.py)

For an .onnx file the inputs follow its declared shapes: a symbolic first
dim is the batch, other symbolic dims 128; float inputs random, integer
inputs ones for masks, else token ids below 1000.

With --torch, runs torch eager on the GPU instead (the same model and
input), to compare kernels with ours. Prints nothing of its own beyond the
model's placement: the profiler's per-kernel table is the output."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hdep  # noqa: E402


def run_torch(name, batch, runs):
    import torch
    model = hdep.build_torchvision(name).cuda()
    x = torch.randn(batch, 3, 224, 224, device="cuda")
    torch.backends.cudnn.allow_tf32 = True
    with torch.no_grad():
        for _ in range(runs):
            model(x)
    torch.cuda.synchronize()


def main():
    args = [a for a in sys.argv[1:] if a != "--torch"]
    name = args[0] if len(args) > 0 else "mobilenet_v2"
    batch = int(args[1]) if len(args) > 1 else 32
    runs = int(args[2]) if len(args) > 2 else 3
    if "--torch" in sys.argv[1:]:
        run_torch(name, batch, runs)
        return
    import onnxruntime as ort
    path = name if name.endswith(".onnx") else os.path.join(os.environ.get("TMPDIR", "/tmp"), f"kernels_{name}.onnx")
    if not os.path.exists(path):
        hdep.export_torchvision(name, path)
    hdep.register(ort)
    sess = hdep.ep_session(ort, path, hdep.gpu_device(ort))
    print(hdep.placement_str(hdep.placement(sess)), flush=True)
    rng = np.random.default_rng(0)
    feeds = {}
    for i in sess.get_inputs():
        dims = [d if isinstance(d, int) else (batch if k == 0 else 128) for k, d in enumerate(i.shape)]
        if "float" in i.type:
            feeds[i.name] = rng.standard_normal(dims, dtype=np.float32)
        elif "mask" in i.name:
            feeds[i.name] = np.ones(dims, dtype=np.int64)
        else:
            feeds[i.name] = rng.integers(0, 1000, dims, dtype=np.int64)
    for _ in range(runs):
        sess.run(None, feeds)


if __name__ == "__main__":
    main()
