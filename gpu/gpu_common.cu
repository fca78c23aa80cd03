// gpu_common: host helpers behind gpu_common.cuh that need one definition.
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "gpu/gpu_common.cuh"

namespace gpu {

bool env_switch_on(const char *name, std::atomic<int> &cache) {
  int w = cache.load(std::memory_order_relaxed);
  if (w < 0) {
    const char *v = getenv(name);
    w = !(v && strcmp(v, "0") == 0);
    cache.store(w, std::memory_order_relaxed);
  }
  return w != 0;
}

bool early_launch_on() {
#if defined(GPU_VENDOR_HIP)
  return false;
#else
  // HIPDNN_EP_EARLY_LAUNCH=0 turns it off (a switch for A/B runs and for
  // ruling it out); read once a process.
  static std::atomic<int> wanted{-1};
  if (!env_switch_on("HIPDNN_EP_EARLY_LAUNCH", wanted)) return false;
  // Per device, its compute capability (sm_90 brought the launch attribute):
  // 0 not asked yet, 1 yes, 2 no.
  static std::atomic<int> per_device[kCachedDevices];
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kCachedDevices) return false;
  int known = per_device[dev].load(std::memory_order_relaxed);
  if (!known) {
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) return false;
    known = major >= 9 ? 1 : 2;
    per_device[dev].store(known, std::memory_order_relaxed);
  }
  return known == 1;
#endif
}

bool built_for(const void *kernel, int arch, std::atomic<int> *cached) {
  // 0 not asked yet, 1 yes, 2 no; devices past kCachedDevices are asked each call
  int dev = 0;
  if (gpuGetDevice(&dev) != gpuSuccess) return false;
  const bool keep = dev >= 0 && dev < kCachedDevices;
  int known = keep ? cached[dev].load(std::memory_order_relaxed) : 0;
  if (!known) {
    gpuFuncAttributes fa;
    // the PTX's version: code JIT-compiled from an older PTX reports the
    // device's binary version, its __CUDA_ARCH__ branches the old ones
    known = gpuFuncGetAttributes(&fa, kernel) == gpuSuccess && fa.ptxVersion >= arch ? 1 : 2;
    if (keep) cached[dev].store(known, std::memory_order_relaxed);
  }
  return known == 1;
}

}  // namespace gpu
