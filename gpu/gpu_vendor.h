/* gpu_vendor: the GPU runtime names the project uses, mapped to CUDA or HIP.
 *
 * Host code and kernels call gpu* names only; this header is the one place
 * that knows which runtime is underneath. HIP is selected by
 * HIPDNN_EP_HIP or __HIP_PLATFORM_AMD__, CUDA otherwise. The list holds only
 * what is used: add a name here (both sides) before using it.
 * Host C code compiles against it with a C compiler; .cu files with nvcc or
 * hipcc. */
#ifndef GPU_VENDOR_H
#define GPU_VENDOR_H

#if defined(HIPDNN_EP_HIP) || defined(__HIP_PLATFORM_AMD__)
#define GPU_VENDOR_HIP 1
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__
#endif
#include <hip/hip_runtime_api.h>
#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#endif

#define GPU_RUNTIME_NAME "HIP"
#define GPU_API_PREFIX "hip"
#define GPU_VENDOR_ID 0x1002u

typedef hipError_t gpuError_t;
typedef hipStream_t gpuStream_t;
typedef hipEvent_t gpuEvent_t;
typedef hipDeviceProp_t gpuDeviceProp;

#define gpuSuccess hipSuccess
#define gpuErrorMemoryAllocation hipErrorOutOfMemory
#define gpuErrorNoDevice hipErrorNoDevice
#define gpuErrorInsufficientDriver hipErrorInsufficientDriver
#define gpuErrorNotReady hipErrorNotReady

#define gpuGetErrorName hipGetErrorName
#define gpuGetErrorString hipGetErrorString
#define gpuGetLastError hipGetLastError
#define gpuGetDeviceCount hipGetDeviceCount
#define gpuGetDeviceProperties hipGetDeviceProperties
#define gpuSetDevice hipSetDevice
#define gpuGetDevice hipGetDevice
#define gpuDriverGetVersion hipDriverGetVersion
#define gpuRuntimeGetVersion hipRuntimeGetVersion

#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuMallocHost(p, n) hipHostMalloc((p), (n), hipHostMallocDefault)
#define gpuFreeHost hipHostFree
#define gpuMemGetInfo hipMemGetInfo
#define gpuMemcpy hipMemcpy
#define gpuMemcpyAsync hipMemcpyAsync
#define gpuMemsetAsync hipMemsetAsync
#define gpuMemcpy2DAsync hipMemcpy2DAsync
#define gpuMemset2DAsync hipMemset2DAsync
#define gpuMemcpyHostToDevice hipMemcpyHostToDevice
#define gpuMemcpyDeviceToHost hipMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice hipMemcpyDeviceToDevice

#define gpuStreamCreateWithFlags hipStreamCreateWithFlags
#define gpuStreamNonBlocking hipStreamNonBlocking
#define gpuStreamDestroy hipStreamDestroy
#define gpuStreamSynchronize hipStreamSynchronize
#define gpuDeviceSynchronize hipDeviceSynchronize
#define gpuStreamWaitEvent hipStreamWaitEvent
#define gpuEventCreateWithFlags hipEventCreateWithFlags
#define gpuEventDisableTiming hipEventDisableTiming
#define gpuEventDefault hipEventDefault
#define gpuEventRecord hipEventRecord
#define gpuEventSynchronize hipEventSynchronize
#define gpuEventQuery hipEventQuery
#define gpuEventElapsedTime hipEventElapsedTime
#define gpuEventDestroy hipEventDestroy

/* a kernel's attributes (the architecture its binary was built for) */
typedef hipFuncAttributes gpuFuncAttributes;
#define gpuFuncGetAttributes hipFuncGetAttributes
#define gpuOccupancyMaxActiveBlocksPerMultiprocessor hipOccupancyMaxActiveBlocksPerMultiprocessor
#define gpuDeviceGetAttribute hipDeviceGetAttribute
#define gpuDevAttrMultiProcessorCount hipDeviceAttributeMultiprocessorCount
#define gpuDevAttrMaxSharedMemoryPerMultiprocessor hipDeviceAttributeMaxSharedMemoryPerMultiprocessor
#define gpuDevAttrMaxSharedMemoryPerBlockOptin hipDeviceAttributeSharedMemPerBlockOptin

/* graphs and stream capture */
typedef hipGraph_t gpuGraph_t;
typedef hipGraphExec_t gpuGraphExec_t;
#define gpuStreamCaptureModeThreadLocal hipStreamCaptureModeThreadLocal
#define gpuStreamBeginCapture hipStreamBeginCapture
#define gpuStreamEndCapture hipStreamEndCapture
#define gpuGraphInstantiate(exec, graph) hipGraphInstantiate((exec), (graph), NULL, NULL, 0)
#define gpuGraphExecUpdate(exec, graph) hipGraphExecUpdate((exec), (graph), NULL, NULL)
#define gpuGraphLaunch hipGraphLaunch
typedef hipStreamCaptureStatus gpuStreamCaptureStatus;
#define gpuStreamCaptureStatusNone hipStreamCaptureStatusNone
#define gpuStreamIsCapturing hipStreamIsCapturing
#define gpuGraphDestroy hipGraphDestroy
#define gpuGraphExecDestroy hipGraphExecDestroy
/* a captured graph's nodes (gpu_graph.cu rewrites memset nodes; it makes
 * the dependency calls itself: they differ by vendor and CUDA version) */
typedef hipGraphNode_t gpuGraphNode_t;
typedef hipGraphNodeType gpuGraphNodeType;
typedef hipMemsetParams gpuMemsetParams;
typedef hipKernelNodeParams gpuKernelNodeParams;
#define gpuGraphNodeTypeMemset hipGraphNodeTypeMemset
#define gpuGraphGetNodes hipGraphGetNodes
#define gpuGraphGetRootNodes hipGraphGetRootNodes
#define gpuGraphNodeGetType hipGraphNodeGetType
#define gpuGraphMemsetNodeGetParams hipGraphMemsetNodeGetParams
#define gpuGraphAddKernelNode hipGraphAddKernelNode
#define gpuGraphDestroyNode hipGraphDestroyNode

#if defined(__HIPCC__)
typedef __half gpu_half;
#endif

#else /* CUDA */
#define GPU_VENDOR_CUDA 1
#include <cuda_runtime_api.h>
#if defined(__CUDACC__)
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#endif

#define GPU_RUNTIME_NAME "CUDA"
#define GPU_API_PREFIX "cuda"
#define GPU_VENDOR_ID 0x10DEu

typedef cudaError_t gpuError_t;
typedef cudaStream_t gpuStream_t;
typedef cudaEvent_t gpuEvent_t;
typedef struct cudaDeviceProp gpuDeviceProp;

#define gpuSuccess cudaSuccess
#define gpuErrorMemoryAllocation cudaErrorMemoryAllocation
#define gpuErrorNoDevice cudaErrorNoDevice
#define gpuErrorInsufficientDriver cudaErrorInsufficientDriver
#define gpuErrorNotReady cudaErrorNotReady

#define gpuGetErrorName cudaGetErrorName
#define gpuGetErrorString cudaGetErrorString
#define gpuGetLastError cudaGetLastError
#define gpuGetDeviceCount cudaGetDeviceCount
#define gpuGetDeviceProperties cudaGetDeviceProperties
#define gpuSetDevice cudaSetDevice
#define gpuGetDevice cudaGetDevice
#define gpuDriverGetVersion cudaDriverGetVersion
#define gpuRuntimeGetVersion cudaRuntimeGetVersion

#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuMallocHost cudaMallocHost
#define gpuFreeHost cudaFreeHost
#define gpuMemGetInfo cudaMemGetInfo
#define gpuMemcpy cudaMemcpy
#define gpuMemcpyAsync cudaMemcpyAsync
#define gpuMemsetAsync cudaMemsetAsync
#define gpuMemcpy2DAsync cudaMemcpy2DAsync
#define gpuMemset2DAsync cudaMemset2DAsync
#define gpuMemcpyHostToDevice cudaMemcpyHostToDevice
#define gpuMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice cudaMemcpyDeviceToDevice

#define gpuStreamCreateWithFlags cudaStreamCreateWithFlags
#define gpuStreamNonBlocking cudaStreamNonBlocking
#define gpuStreamDestroy cudaStreamDestroy
#define gpuStreamSynchronize cudaStreamSynchronize
#define gpuDeviceSynchronize cudaDeviceSynchronize
#define gpuStreamWaitEvent cudaStreamWaitEvent
#define gpuEventCreateWithFlags cudaEventCreateWithFlags
#define gpuEventDisableTiming cudaEventDisableTiming
#define gpuEventDefault cudaEventDefault
#define gpuEventRecord cudaEventRecord
#define gpuEventSynchronize cudaEventSynchronize
#define gpuEventQuery cudaEventQuery
#define gpuEventElapsedTime cudaEventElapsedTime
#define gpuEventDestroy cudaEventDestroy

/* a kernel's attributes (the architecture its binary was built for) */
typedef struct cudaFuncAttributes gpuFuncAttributes;
#define gpuFuncGetAttributes cudaFuncGetAttributes
#define gpuOccupancyMaxActiveBlocksPerMultiprocessor cudaOccupancyMaxActiveBlocksPerMultiprocessor
#define gpuDeviceGetAttribute cudaDeviceGetAttribute
#define gpuDevAttrMultiProcessorCount cudaDevAttrMultiProcessorCount
#define gpuDevAttrMaxSharedMemoryPerMultiprocessor cudaDevAttrMaxSharedMemoryPerMultiprocessor
#define gpuDevAttrMaxSharedMemoryPerBlockOptin cudaDevAttrMaxSharedMemoryPerBlockOptin

/* graphs and stream capture */
typedef cudaGraph_t gpuGraph_t;
typedef cudaGraphExec_t gpuGraphExec_t;
#define gpuStreamCaptureModeThreadLocal cudaStreamCaptureModeThreadLocal
#define gpuStreamBeginCapture cudaStreamBeginCapture
#define gpuStreamEndCapture cudaStreamEndCapture
#define gpuGraphInstantiate(exec, graph) cudaGraphInstantiate((exec), (graph), 0)
#define gpuGraphExecUpdate(exec, graph) cudaGraphExecUpdate((exec), (graph), NULL)
#define gpuGraphLaunch cudaGraphLaunch
typedef enum cudaStreamCaptureStatus gpuStreamCaptureStatus;
#define gpuStreamCaptureStatusNone cudaStreamCaptureStatusNone
#define gpuStreamIsCapturing cudaStreamIsCapturing
#define gpuGraphDestroy cudaGraphDestroy
#define gpuGraphExecDestroy cudaGraphExecDestroy
/* a captured graph's nodes (gpu_graph.cu rewrites memset nodes; it makes
 * the dependency calls itself: they differ by vendor and CUDA version) */
typedef cudaGraphNode_t gpuGraphNode_t;
typedef enum cudaGraphNodeType gpuGraphNodeType;
typedef struct cudaMemsetParams gpuMemsetParams;
typedef struct cudaKernelNodeParams gpuKernelNodeParams;
#define gpuGraphNodeTypeMemset cudaGraphNodeTypeMemset
#define gpuGraphGetNodes cudaGraphGetNodes
#define gpuGraphGetRootNodes cudaGraphGetRootNodes
#define gpuGraphNodeGetType cudaGraphNodeGetType
#define gpuGraphMemsetNodeGetParams cudaGraphMemsetNodeGetParams
#define gpuGraphAddKernelNode cudaGraphAddKernelNode
#define gpuGraphDestroyNode cudaGraphDestroyNode

#if defined(__CUDACC__)
typedef __half gpu_half;
#endif

#endif /* vendor */

#endif
