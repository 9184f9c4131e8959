/* fuzz_options.c — libFuzzer target: option text as users write it ("key=value, ..."), parsed
 * by the registry and each value checked by the kit against one declaration of every type. A
 * crash, a sanitizer report or a leak is a failure; errors are the expected outcome. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "kit/tc_kit.h"

static const tc_option_decl decls[] = {
    {sizeof(tc_option_decl), "f.bool", TC_OPTION_BOOL, TC_OPTION_CONTEXT, "0", 0, 0, NULL, "a bool"},
    {sizeof(tc_option_decl), "f.int", TC_OPTION_INT, TC_OPTION_COMPILE, "3", -5, 1 << 20, NULL, "an int"},
    {sizeof(tc_option_decl), "f.float", TC_OPTION_FLOAT, TC_OPTION_COMPILE, NULL, 0, 0, NULL, "a float"},
    {sizeof(tc_option_decl), "f.str", TC_OPTION_STRING, TC_OPTION_COMPILE, NULL, 0, 0, "text", "a string"},
    {sizeof(tc_option_decl), "f.enum", TC_OPTION_ENUM, TC_OPTION_CONTEXT, "64", 0, 0, "64|128|auto", "an enum"},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  tc_options *o = options_parse(text);
  if (o) {
    char buf[512];
    options_describe(o, NULL, buf, sizeof buf);
    options_describe(o, "f", buf, sizeof buf);
    options_free(o);
  }
  /* The same bytes as a value of each type. */
  char norm[300], err[512];
  for (size_t i = 0; i < sizeof decls / sizeof decls[0]; i++) tck_option_check(&decls[i], text, norm, sizeof norm, err, sizeof err);
  free(text);
  tc_error_clear();
  return 0;
}
