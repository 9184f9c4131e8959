# tc_kit_embed_text(<target-var> <header> <name>): adds to <target-var> a generated C file that
# holds <header> as `const char *const <name>_lines[]` (embed_text.cmake), rebuilt when the
# header changes. For plugins that paste preludes into generated code, e.g.
#   tc_kit_embed_text(SOURCES ${TC_KIT_SCALAR_PRELUDE} tck_scalar_prelude)
set(TC_KIT_DIR ${CMAKE_CURRENT_LIST_DIR})
set(TC_KIT_SCALAR_PRELUDE ${CMAKE_CURRENT_LIST_DIR}/prelude/tc_scalar.h)
function(tc_kit_embed_text out_var header name)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${name}.c)
  add_custom_command(OUTPUT ${out}
                     COMMAND ${CMAKE_COMMAND} -DIN=${header} -DOUT=${out} -DNAME=${name} -P ${TC_KIT_DIR}/embed_text.cmake
                     DEPENDS ${header} ${TC_KIT_DIR}/embed_text.cmake
                     COMMENT "Embedding ${header}" VERBATIM)
  set(${out_var} ${${out_var}} ${out} PARENT_SCOPE)
endfunction()
