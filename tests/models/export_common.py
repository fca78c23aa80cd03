"""The loop the model exporters share (export_torchvision.py,
export_transformers.py): one OUT/NAME.onnx per name, a file newer than the
exporting script kept, a failed export reported and the next one tried."""
import argparse
import os
import sys
import time


def export_many(tool, script, out, names, force, export, describe):
    """export(name, path) writes path; describe() says what exported it.
    Returns 0 when every model exists afterwards, else 1."""
    os.makedirs(out, exist_ok=True)
    me = os.path.getmtime(os.path.abspath(script))
    rc = 0
    for name in names:
        path = os.path.join(out, f"{name}.onnx")
        if not force and os.path.exists(path) and os.path.getmtime(path) >= me and os.path.getsize(path) > 0:
            print(f"{tool}: {path} is up to date", flush=True)
            continue
        t0 = time.time()
        try:
            export(name, path)
        except SystemExit:
            raise
        except Exception as e:  # report and go on with the next model
            print(f"{tool}: {name}: export failed: {type(e).__name__}: {e}", file=sys.stderr)
            rc = 1
            continue
        print(f"{tool}: {path}: {os.path.getsize(path) / 1e3:.0f} kB in {time.time() - t0:.1f} s ({describe()})",
              flush=True)
    return rc


def parse_args(doc):
    """--out DIR [--opset 17] [--force] MODEL..."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--opset", type=int, default=17)
    ap.add_argument("--force", action="store_true", help="export even if an up-to-date file exists")
    ap.add_argument("models", nargs="+")
    return ap.parse_args()
