# cmake -DIN=tc_cpu_prelude.h -DOUT=tc_cpu_prelude.c -P embed_prelude.cmake
# Writes IN as a C array of string literals, one per line (each well under the 4095 characters
# ISO C guarantees for a literal), so the plugin carries the prelude without reading files.
file(READ "${IN}" text)
string(REPLACE "\\" "\\\\" text "${text}")
string(REPLACE "\"" "\\\"" text "${text}")
string(REPLACE "\t" "\\t" text "${text}")
string(REGEX REPLACE "\n$" "" text "${text}")
string(REPLACE "\n" "\\n\",\n  \"" text "${text}")
file(WRITE "${OUT}"
  "/* Generated from tc_cpu_prelude.h by embed_prelude.cmake: edit the header, not this. */\n"
  "#include <stddef.h>\n\n"
  "extern const char *const icpu_prelude_lines[];\n"
  "extern const size_t icpu_prelude_n_lines;\n"
  "const char *const icpu_prelude_lines[] = {\n  \"${text}\\n\",\n};\n"
  "const size_t icpu_prelude_n_lines = sizeof icpu_prelude_lines / sizeof icpu_prelude_lines[0];\n")
