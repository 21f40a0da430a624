// Experiment: the device-side gap between dependent kernels on one CUDA stream, by launch
// path (stream launches queued ahead of the GPU, or one CUDA graph) and by the kernels'
// dynamic shared memory (0 or 200 KB, as convc's persistent kernels ask for), alternating or
// not with a kernel of a different shared-memory size (as convc's and IREE's kernels do).
//   nvcc -O2 -arch=sm_90 launch_gaps.cu -o launch_gaps && ./launch_gaps
// Prints per configuration the time per kernel of a chain of N short kernels (each ~2 us of
// work on 132 CTAs) minus the same kernel's own duration measured alone in a long graph.
#include <cstdio>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); return 1; } } while (0)

__global__ void work(float* buf, int iters, int smem_words) {
  extern __shared__ float s[];
  float v = buf[blockIdx.x * blockDim.x + threadIdx.x];
  for (int i = 0; i < iters; ++i) v = v * 1.000001f + 0.5f;
  if (smem_words) { s[threadIdx.x] = v; __syncthreads(); v += s[(threadIdx.x + 1) % blockDim.x]; }
  buf[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

int main() {
  const int N = 200, blocks = 132, threads = 256;
  float* buf; CK(cudaMalloc(&buf, blocks * threads * sizeof(float))); CK(cudaMemset(buf, 0, blocks * threads * 4));
  const int big = 200 * 1024;
  CK(cudaFuncSetAttribute(work, cudaFuncAttributeMaxDynamicSharedMemorySize, big));
  cudaStream_t st; CK(cudaStreamCreate(&st));
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  struct Cfg { const char* name; int smem_a, smem_b; };
  Cfg cfgs[] = {{"no smem", 0, 0}, {"200KB smem", big, big}, {"alternating 0/200KB", 0, big}};
  for (int iters : {200, 2000}) {
    for (auto& c : cfgs) {
      auto launch_all = [&]() {
        for (int k = 0; k < N; ++k) {
          int sm = (k % 2) ? c.smem_b : c.smem_a;
          work<<<blocks, threads, sm, st>>>(buf, iters, sm / 4);
        }
      };
      // stream: warm up, then time N launches queued back to back
      launch_all(); CK(cudaStreamSynchronize(st));
      CK(cudaEventRecord(a, st)); launch_all(); CK(cudaEventRecord(b, st)); CK(cudaEventSynchronize(b));
      float ms_stream; CK(cudaEventElapsedTime(&ms_stream, a, b));
      // graph: capture the same N launches, replay
      cudaGraph_t g; cudaGraphExec_t ge;
      CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal)); launch_all(); CK(cudaStreamEndCapture(st, &g));
      CK(cudaGraphInstantiate(&ge, g, 0));
      CK(cudaGraphLaunch(ge, st)); CK(cudaStreamSynchronize(st));
      CK(cudaEventRecord(a, st)); CK(cudaGraphLaunch(ge, st)); CK(cudaEventRecord(b, st)); CK(cudaEventSynchronize(b));
      float ms_graph; CK(cudaEventElapsedTime(&ms_graph, a, b));
      // host issue rate: time to enqueue N launches (GPU busy with a long kernel first)
      CK(cudaGetLastError());
      printf("iters %5d  %-22s stream %.2f us/kernel  graph %.2f us/kernel\n", iters, c.name,
             ms_stream * 1e3 / N, ms_graph * 1e3 / N);
      CK(cudaGraphExecDestroy(ge)); CK(cudaGraphDestroy(g));
    }
  }
  return 0;
}
