"""Runs one torchvision model through the EP a few times, for a kernel
profiler to wrap (GPU machine):

    ncu --clock-control none --metrics gpu__time_duration.sum \
        python3 bench/kernels.py mobilenet_v2 32

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
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"kernels_{name}.onnx")
    if not os.path.exists(path):
        hdep.export_torchvision(name, path)
    hdep.register(ort)
    sess = hdep.ep_session(ort, path, hdep.gpu_device(ort))
    print(hdep.placement_str(hdep.placement(sess)), flush=True)
    x = np.random.default_rng(0).standard_normal((batch, 3, 224, 224), dtype=np.float32)
    inp = sess.get_inputs()[0].name
    for _ in range(runs):
        sess.run(None, {inp: x})


if __name__ == "__main__":
    main()
