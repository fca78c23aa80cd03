/* A decoder in onnxruntime-genai's layout (tools/llm/gen_decoder.py) as the
 * LLM tests read it: its folder, genai_config.json's sizes, the prompt the
 * generator's reference uses. */
#ifndef TESTS_LLM_MODEL_H
#define TESTS_LLM_MODEL_H

#include <stddef.h>
#include <stdint.h>

#define LM_MAX_LAYERS 64
#define LM_MAX_LEN 4096

typedef struct lm_model {
  char path[2048]; /* DIR/model.onnx */
  int layers, kv_heads, head_size, vocab, max_length;
  int has_cache; /* decoder.inputs.past_key_names present */
  int dtype;     /* KV element type (logits' when there is no KV); set by the test */
} lm_model;

/* Reads DIR/genai_config.json. 0: ok; HH_SKIP (77): DIR holds SKIP instead
 * of a model (the generator's python could not run; reason printed); 1: an
 * error (printed). */
int lm_model_open(const char *dir, lm_model *m);
/* A whole file, NUL-terminated (free it); NULL if unreadable. */
char *lm_slurp(const char *path, size_t *len);
/* Token col of prompt row (gen_decoder.py's prompt_tokens). */
int64_t lm_prompt_token(int64_t row, int64_t col, int vocab);

#endif
