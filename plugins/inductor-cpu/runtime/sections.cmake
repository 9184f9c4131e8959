# cmake -DIN=prelude.h -DOUT=sections.h -DSECTIONS=vec,gemm -P sections.cmake
# Writes the named "//@section NAME" parts of a sectioned prelude (tc_cpu_prelude.h), in the
# order given, as one header: what runtime/gemm_runtime.c compiles against, the same text the
# units paste (prelude.c), so the two sides agree on types and block sizes by construction.
string(REPLACE "," ";" SECTIONS "${SECTIONS}") # commas: a semicolon would end the build's shell command
file(READ "${IN}" text)
get_filename_component(in_name "${IN}" NAME)
set(out "/* Generated from ${in_name} (sections ${SECTIONS}) by sections.cmake: edit the prelude, not this. */\n")
foreach(section IN LISTS SECTIONS)
  string(FIND "${text}" "\n//@section ${section}\n" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${in_name} has no section ${section}")
  endif()
  string(LENGTH "\n//@section ${section}\n" marker)
  math(EXPR from "${at} + ${marker}")
  string(SUBSTRING "${text}" ${from} -1 rest)
  string(FIND "${rest}" "\n//@section " end)
  if(NOT end EQUAL -1)
    math(EXPR end "${end} + 1")
    string(SUBSTRING "${rest}" 0 ${end} rest)
  endif()
  string(APPEND out "${rest}")
endforeach()
file(WRITE "${OUT}" "${out}")
