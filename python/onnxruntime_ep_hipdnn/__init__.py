"""hipdnn-ep: an ONNX Runtime plugin execution provider for hipDNN (AMD) and
cuDNN (NVIDIA) GPUs, packaged as ONNX Runtime's plugin-EP convention asks.

The package holds the EP library (``libhipdnn_ep.so``) and the GPU backend
modules it loads from its own folder (``libhipdnn_ep_cuda.so``,
``libhipdnn_ep_hip.so``, those the build made). It holds no ONNX Runtime and
depends on none: register the library with the ``onnxruntime`` you use
(1.29 or later: the EP needs its API version 29)::

    import onnxruntime as ort
    import onnxruntime_ep_hipdnn as hipdnn_ep

    gpus = hipdnn_ep.register_library(ort)   # our GPU devices, GPU 0 first
    so = ort.SessionOptions()
    so.add_provider_for_devices(gpus[:1], {"use_tf32": "1"})
    sess = ort.InferenceSession("model.onnx", sess_options=so)

Importing this module does not import onnxruntime.
"""
from __future__ import annotations

import os

from ._version import __version__

__all__ = [
    "__version__",
    "get_library_path",
    "get_gpu_module_paths",
    "get_ep_name",
    "get_ep_names",
    "get_ep_devices",
    "register_library",
    "unregister_library",
]

_EP_NAME = "HipDNNExecutionProvider"
_EP_VENDOR = "hipdnn-ep"  # what the library's factories report (OrtEpDevice.ep_vendor)
_LIBRARY = "libhipdnn_ep.so"
_GPU_MODULES = ("libhipdnn_ep_cuda.so", "libhipdnn_ep_hip.so")
_HERE = os.path.dirname(os.path.abspath(__file__))


def get_library_path() -> str:
    """The absolute path of the EP library, for
    ``onnxruntime.register_execution_provider_library(name, path)``,
    ``onnxruntime_genai.register_execution_provider_library(name, path)`` or
    ``AMDGPU_EP_PATH``. The GPU modules sit beside it, where it looks for them."""
    path = os.path.join(_HERE, _LIBRARY)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path} is missing: this copy of onnxruntime-ep-hipdnn is incomplete "
                                "(reinstall it, or build the wheel with `make wheel`)")
    return path


def get_gpu_module_paths() -> list[str]:
    """The GPU backend modules this package carries (CUDA/cuDNN, HIP/hipDNN).
    Each is used when its GPU and vendor library are present at run time."""
    return [os.path.join(_HERE, m) for m in _GPU_MODULES if os.path.isfile(os.path.join(_HERE, m))]


def get_ep_name() -> str:
    """The recommended registration name, which is also the EP name of the
    main device: GPU 0, or the CPU reference backend on a machine with no GPU."""
    return _EP_NAME


def get_ep_names(name: str | None = None) -> list[str]:
    """Every EP name the library can offer when registered under ``name``
    (default: ``get_ep_name()``). The EP takes its registration name, and
    offers one device per EP name, because ONNX Runtime wants the devices of
    one session to share one memory info:

    - ``name``: GPU 0; on a machine with no GPU, the CPU (reference backend)
    - ``name + "_ref"``: the CPU, only when there is a GPU
    - ``name + "_1"``, ``name + "_2"``: GPUs 1 and 2, when present

    ONNX Runtime takes at most four factories from one library, so there are
    no more names (choose GPUs with CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES).
    Which names have a device depends on the machine; filter
    ``onnxruntime.get_ep_devices()`` by ``ep_name``, or use ``get_ep_devices()``.
    Never give one session devices of two names (ONNX Runtime refuses them).
    """
    name = name or _EP_NAME
    return [name, name + "_ref", name + "_1", name + "_2"]


def _onnxruntime(ort):
    if ort is not None:
        return ort
    try:
        import onnxruntime
    except ImportError as e:
        raise ImportError("onnxruntime-ep-hipdnn registers its library with ONNX Runtime's Python package "
                          "(1.29 or later), which it does not install: install onnxruntime (or a variant), "
                          "or pass the module") from e
    return onnxruntime


def _backend(dev) -> str:
    return dict(dev.ep_metadata or {}).get("backend", "")


def get_ep_devices(ort=None, name: str | None = None, include_cpu: bool = False) -> list:
    """The ``OrtEpDevice`` s of this EP registered under ``name`` (default
    ``get_ep_name()``): the GPUs in GPU order (``ep_metadata["device_id"]``),
    then, with ``include_cpu``, the CPU device of the reference backend.
    Empty when there is no GPU and ``include_cpu`` is false. ``ort`` is the
    onnxruntime module (imported when not given)."""
    ort = _onnxruntime(ort)
    names = get_ep_names(name)
    ours = [d for d in ort.get_ep_devices() if d.ep_name in names and d.ep_vendor == _EP_VENDOR]
    gpus = sorted((d for d in ours if _backend(d) != "ref"),
                  key=lambda d: int(dict(d.ep_metadata or {}).get("device_id", "0")))
    cpus = [d for d in ours if _backend(d) == "ref"]
    return gpus + (cpus if include_cpu else [])


def register_library(ort=None, name: str | None = None, include_cpu: bool = False) -> list:
    """Registers this package's library with ONNX Runtime under ``name``
    (default ``get_ep_name()``) and returns ``get_ep_devices(ort, name,
    include_cpu)``: our GPU devices, GPU 0 first; on a machine with no GPU an
    empty list (with ``include_cpu``, the CPU reference device, which is far
    slower than a GPU and meant for tests).

    ``ort`` is the onnxruntime module (imported when not given: any variant
    with the plugin-EP API, 1.29 or later). A name this EP was registered
    under already (an earlier call, or a host such as onnxruntime-genai) is
    reused; a name another library holds raises ValueError. Unregister
    (``unregister_library``) only after every session using it is gone.
    """
    ort = _onnxruntime(ort)
    name = name or _EP_NAME
    holders = {d.ep_vendor for d in ort.get_ep_devices() if d.ep_name == name}
    if not holders:
        ort.register_execution_provider_library(name, get_library_path())
    elif holders != {_EP_VENDOR}:
        raise ValueError(f"the EP name {name!r} is registered already, by another library "
                         f"(vendor {', '.join(sorted(holders))}): register this one under another name")
    return get_ep_devices(ort, name, include_cpu)


def unregister_library(ort=None, name: str | None = None) -> None:
    """Unregisters the library registered under ``name`` (default ``get_ep_name()``)."""
    _onnxruntime(ort).unregister_execution_provider_library(name or _EP_NAME)
