// gpu_embed: EmbedLayerNormalization, one block per token: the word,
// position and segment rows summed into shared memory, then a layer norm
// over them (fp32 statistics); a second tiny kernel counts each row's mask.
#include "gpu/gpu_common.cuh"

namespace {

using gpu::ld;
using gpu::st;

// Row r of a table when 0 <= r < rows, else -1 (the token gets zeros).
__device__ __forceinline__ int64_t checked(int64_t r, int64_t rows) { return r >= 0 && r < rows ? r : -1; }

template <typename T>
__global__ void embed_rows(gpu_embed_desc d) {
  gpu::wait_prior();
  gpu::start_next();
  extern __shared__ float e[];
  __shared__ float red[8];
  const int64_t tok = blockIdx.x, bi = tok / d.seq, si = tok % d.seq;
  const int64_t H = d.hidden;
  const int64_t wr = checked(d.ids[tok], d.word_rows);
  const int64_t pr = checked(d.pos_ids ? d.pos_ids[bi * d.pos_batch_stride + si] : si, d.pos_rows);
  const int64_t sr = d.seg ? checked(d.seg_ids[tok], d.seg_rows) : 0;
  const bool ok = wr >= 0 && pr >= 0 && sr >= 0;
  float part = 0.f;
  for (int64_t c = threadIdx.x; c < H; c += blockDim.x) {
    float v = 0.f;
    if (ok) {
      v = ld((const T *)d.word, wr * H + c) + ld((const T *)d.pos, pr * H + c);
      if (d.seg) v += ld((const T *)d.seg, sr * H + c);
    }
    e[c] = v;
    if (d.sum) st((T *)d.sum, tok * H + c, v);
    part += v;
  }
  const float mean = gpu::block_reduce(part, false, red) / (float)H;
  float sq = 0.f;
  for (int64_t c = threadIdx.x; c < H; c += blockDim.x) sq += (e[c] - mean) * (e[c] - mean);
  const float inv = rsqrtf(gpu::block_reduce(sq, false, red) / (float)H + d.eps);
  for (int64_t c = threadIdx.x; c < H; c += blockDim.x)
    st((T *)d.out, tok * H + c, (e[c] - mean) * inv * ld((const T *)d.gamma, c) + ld((const T *)d.beta, c));
}

__global__ void mask_counts(const int32_t *mask, int32_t *out, int64_t batch, int64_t seq) {
  gpu::wait_prior();
  gpu::start_next();
  const int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= batch) return;
  int32_t n = 0;
  for (int64_t s = 0; mask && s < seq; ++s) n += mask[b * seq + s] == 1;
  out[b] = n;
}

template <typename T>
int embed(const gpu_embed_desc *d, gpuStream_t s) {
  const int64_t tokens = d->batch * d->seq;
  if (d->hidden < 1 || d->hidden > GPU_EMBED_MAX_HIDDEN || tokens > 0x7fffffff) return -1;
  if (tokens > 0) gpu::launch(embed_rows<T>, (unsigned)tokens, 256, sizeof(float) * (size_t)d->hidden, s, *d);
  if (d->mask_index && d->batch > 0)
    gpu::launch(mask_counts, (unsigned)((d->batch + 255) / 256), 256, 0, s, d->mask, d->mask_index, d->batch, d->seq);
  return gpu::last_error();
}

}  // namespace

extern "C" int gpu_embed_layernorm(const gpu_embed_desc *d, int dtype, void *stream) {
  GPU_DISPATCH(dtype, embed, d, (gpuStream_t)stream)
}
