"""The onnxruntime-ep-hipdnn wheel. Run by build_wheel.py on a staged copy of
this folder that also holds the libraries and _version.py (written from
CMakeLists.txt's project version): do not run it here."""
import os
import re

from setuptools import setup
from setuptools.dist import Distribution

try:
    from setuptools.command.bdist_wheel import bdist_wheel  # setuptools >= 70.1
except ImportError:
    from wheel.bdist_wheel import bdist_wheel  # Debian 12: setuptools 66 + wheel 0.38

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = "onnxruntime_ep_hipdnn"


class BinaryDistribution(Distribution):
    """Platform-specific: the libraries go to platlib (Root-Is-Purelib: false)."""

    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    """Tagged py3-none-<platform>: the package carries ELF libraries for one
    platform but no Python extension, so any Python 3 on it can use it."""

    def get_tag(self):
        _, _, plat = super().get_tag()
        return "py3", "none", plat


def version():
    with open(os.path.join(HERE, PACKAGE, "_version.py")) as f:
        m = re.search(r'^__version__ = "([^"]+)"$', f.read(), re.M)
    if not m:
        raise RuntimeError(f"{PACKAGE}/_version.py has no version: stage with build_wheel.py")
    return m.group(1)


with open(os.path.join(HERE, "README.md")) as f:
    long_description = f.read()

setup(
    name="onnxruntime-ep-hipdnn",
    version=version(),
    description="ONNX Runtime plugin execution provider for hipDNN (AMD) and cuDNN (NVIDIA) GPUs",
    long_description=long_description,
    long_description_content_type="text/markdown",
    packages=[PACKAGE],
    package_data={PACKAGE: ["*.so"]},
    python_requires=">=3.8",
    # No install_requires: ONNX Runtime's plugin-EP packaging guidance asks a
    # plugin EP package not to depend on an onnxruntime package.
    zip_safe=False,
    distclass=BinaryDistribution,
    cmdclass={"bdist_wheel": PlatformWheel},
    classifiers=[
        "Programming Language :: Python :: 3",
        "Programming Language :: C",
        "Operating System :: POSIX :: Linux",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
)
