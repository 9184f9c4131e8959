# cmake -DIN=file.h -DOUT=file.c -DNAME=prefix -P embed_text.cmake
# Writes IN as a C array of string literals, one per line (each well under the 4095 characters
# ISO C guarantees for a literal), `const char *const NAME_lines[]` with `NAME_n_lines`, so a
# plugin carries a text (a prelude for its generated code) without reading files at run time.
# Shared by the plugins that embed plugin-api/kit/prelude/tc_scalar.h and their own preludes.
file(READ "${IN}" text)
get_filename_component(in_name "${IN}" NAME)
string(REPLACE "\\" "\\\\" text "${text}")
string(REPLACE "\"" "\\\"" text "${text}")
string(REPLACE "\t" "\\t" text "${text}")
string(REGEX REPLACE "\n$" "" text "${text}")
string(REPLACE "\n" "\\n\",\n  \"" text "${text}")
file(WRITE "${OUT}"
  "/* Generated from ${in_name} by embed_text.cmake: edit the header, not this. */\n"
  "#include <stddef.h>\n\n"
  "extern const char *const ${NAME}_lines[];\n"
  "extern const size_t ${NAME}_n_lines;\n"
  "const char *const ${NAME}_lines[] = {\n  \"${text}\\n\",\n};\n"
  "const size_t ${NAME}_n_lines = sizeof ${NAME}_lines / sizeof ${NAME}_lines[0];\n")
