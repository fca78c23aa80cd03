# CPU unit tests of the vendor-free layers (no ORT).
foreach(t test_ir test_pool test_fuse test_precision test_plan_pad test_plan_uniform)
  add_executable(${t} ${t}.c)
  target_link_libraries(${t} PRIVATE hd_backend hd_plan hd_ops hd_ir hd_common m)
  add_test(NAME unit_${t} COMMAND ${t})
  set_tests_properties(unit_${t} PROPERTIES LABELS "unit" ENVIRONMENT "${HH_SAN_ENV}")
endforeach()
