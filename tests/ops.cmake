# The non-Conv ops against the CPU EP (tests/test_ops.c), on both runtimes.
add_executable(test_ops test_ops.c)
target_link_libraries(test_ops PRIVATE hh_harness)
hh_add_ort_test(ops test_ops)
# Provider option precision=fp16 / bf16 on fp32 models (a CNN, a transformer
# block) against the CPU EP's fp32 answer (tests/test_precision_ort.c).
add_executable(test_precision_ort test_precision_ort.c)
target_link_libraries(test_precision_ort PRIVATE hh_harness)
hh_add_ort_test(precision test_precision_ort)

# Patterns the fusion passes merge (tests/test_fused_ops.c), multi-node
# models against the CPU EP, on both runtimes.
add_executable(test_fused_ops test_fused_ops.c)
target_link_libraries(test_fused_ops PRIVATE hh_harness)
hh_add_ort_test(fused_ops test_fused_ops)
