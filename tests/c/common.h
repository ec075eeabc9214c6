/* Helpers shared by the C tests: assertions that print the failing call and the library's
 * detailed error message, a temporary directory removed at exit, and cells of Arrow arrays. */
#ifndef PROLLY_TEST_COMMON_H
#define PROLLY_TEST_COMMON_H

#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prollystore.h"

static int g_checks = 0;

/* For the tests that read Arrow C streams (the header declares the Arrow C structs): whether row
 * `i` of an array is valid (not NULL); the next array of a stream; row `i` of a utf8 or binary
 * array (32-bit offsets), its length in *len. */
static inline int is_valid(const struct ArrowArray *a, int64_t i) {
  const uint8_t *bits = a->buffers[0];
  if (!bits) return 1;
  int64_t k = a->offset + i;
  return (bits[k / 8] >> (k % 8)) & 1;
}

/* Fills `arr` with the next array of stream `s`: 1, or 0 at the end of the stream (an error is
 * printed with the stream's message, and the test exits). */
static inline int next_array(struct ArrowArrayStream *s, struct ArrowArray *arr) {
  int rc = s->get_next(s, arr);
  if (rc != 0) {
    fprintf(stderr, "get_next: %d %s\n", rc, s->get_last_error(s));
    exit(1);
  }
  return arr->release != NULL;
}

static inline const char *bytes_at(const struct ArrowArray *a, int64_t i, int32_t *len) {
  const int32_t *off = a->buffers[1];
  const char *data = a->buffers[2];
  int64_t k = a->offset + i;
  *len = off[k + 1] - off[k];
  return data + off[k];
}

static void fail_detail(const char *file, int line, const char *what, unsigned got, unsigned want) {
  char msg[512];
  prolly_last_error_message(msg, sizeof msg);
  fprintf(stderr, "%s:%d: %s returned %u (%s), expected %u; last error: %s\n", file, line, what,
          got, prolly_result_message((int)got), want, msg);
  exit(1);
}

/* EXPECT(call, code): the call must return exactly `code`. */
#define EXPECT(call, code)                                                   \
  do {                                                                       \
    unsigned got_ = (unsigned)(call);                                        \
    g_checks++;                                                              \
    if (got_ != (unsigned)(code)) fail_detail(__FILE__, __LINE__, #call, got_, (unsigned)(code)); \
  } while (0)
#define OK(call) EXPECT(call, PROLLY_RESULT_OK)
#define CHECK(cond)                                                          \
  do {                                                                       \
    g_checks++;                                                              \
    if (!(cond)) {                                                           \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                               \
    }                                                                        \
  } while (0)

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

/* Removes a directory tree. */
static void rm_rf(const char *dir) { nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* Makes a fresh temporary directory; the caller frees nothing (static buffer per call site). */
static void make_temp_dir(char *buf, size_t len) {
  const char *base = getenv("TMPDIR");
  snprintf(buf, len, "%s/prolly-c-XXXXXX", base && *base ? base : "/tmp");
  if (!mkdtemp(buf)) {
    perror("mkdtemp");
    exit(1);
  }
}

#endif
