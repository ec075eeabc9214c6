/* Cross-language check: writes or checks a map in a file store, so that Rust (crates/ffi/tests/
 * interop.rs) and C read each other's stores.
 *
 *   interop write DIR ROOT PREFIX N   map of N rows i -> (PREFIX-i, i * 0.5) committed as ROOT
 *   interop check DIR ROOT PREFIX N   open read-only and check exactly those rows
 *   interop                           both, in a temporary directory
 *
 * Schema: key (int64), value (string, float64). */
#define _XOPEN_SOURCE 700
#include "common.h"

#include <inttypes.h>

static prolly_schema *schema(void) {
  prolly_type k[] = {{PROLLY_ENCODING_INT64, 0}};
  prolly_type v[] = {{PROLLY_ENCODING_STRING, 0}, {PROLLY_ENCODING_FLOAT64, 0}};
  prolly_schema *s = NULL;
  OK(prolly_schema_new(k, 1, v, 2, &s));
  return s;
}

static void write_map(const char *dir, const char *root_name, const char *prefix, int64_t n) {
  prolly_schema *s = schema();
  prolly_store *st = NULL;
  OK(prolly_store_create_file(dir, PROLLY_HASH_PROFILE_DOLT, &st));
  prolly_tuple_builder *kb, *vb;
  OK(prolly_tuple_builder_new(s, PROLLY_SIDE_KEY, &kb));
  OK(prolly_tuple_builder_new(s, PROLLY_SIDE_VALUE, &vb));
  prolly_map_builder *mb;
  OK(prolly_map_builder_new(st, s, &mb));
  for (int64_t i = 0; i < n; i++) {
    char txt[64];
    int len = snprintf(txt, sizeof txt, "%s-%" PRId64, prefix, i);
    OK(prolly_tuple_builder_put_int64(kb, 0, i));
    OK(prolly_tuple_builder_put_string(vb, 0, txt, (size_t)len));
    OK(prolly_tuple_builder_put_float64(vb, 1, (double)i * 0.5));
    OK(prolly_map_builder_append_row(mb, kb, vb));
  }
  prolly_map *m;
  OK(prolly_map_builder_finish(mb, &m));
  prolly_address root;
  OK(prolly_map_root(m, &root));
  prolly_address old;
  prolly_root_update up = {root_name, NULL, &root};
  if (prolly_store_root_get(st, root_name, &old) == PROLLY_RESULT_OK) up.expected = &old;
  uint64_t gen;
  OK(prolly_store_commit(st, &up, 1, &gen));
  prolly_map_free(m);
  prolly_map_builder_free(mb);
  prolly_tuple_builder_free(kb);
  prolly_tuple_builder_free(vb);
  prolly_store_free(st);
  prolly_schema_free(s);
}

static void check_map(const char *dir, const char *root_name, const char *prefix, int64_t n) {
  prolly_schema *s = schema();
  prolly_store *st = NULL;
  OK(prolly_store_open_file(dir, 0, &st));
  prolly_address root;
  OK(prolly_store_root_get(st, root_name, &root));
  prolly_map *m;
  OK(prolly_map_open(st, s, &root, &m));
  uint64_t count;
  OK(prolly_map_count(m, &count));
  CHECK(count == (uint64_t)n);
  prolly_bound open = {PROLLY_BOUND_KIND_UNBOUNDED, NULL, 0};
  prolly_cursor *c;
  OK(prolly_map_range(m, &open, &open, PROLLY_DIRECTION_FORWARD, &c));
  prolly_row row;
  int64_t i = 0;
  while (prolly_cursor_next(c, &row) == PROLLY_RESULT_OK) {
    int64_t k;
    bool nul;
    const uint8_t *txt;
    size_t len;
    double f;
    char want[64];
    int wl = snprintf(want, sizeof want, "%s-%" PRId64, prefix, i);
    OK(prolly_field_int64(s, PROLLY_SIDE_KEY, row.key, row.key_len, 0, &k, &nul));
    OK(prolly_field_string(s, PROLLY_SIDE_VALUE, row.value, row.value_len, 0, &txt, &len, &nul));
    OK(prolly_field_float64(s, PROLLY_SIDE_VALUE, row.value, row.value_len, 1, &f, &nul));
    CHECK(k == i && len == (size_t)wl && memcmp(txt, want, len) == 0 && f == (double)i * 0.5);
    i++;
  }
  CHECK(i == n);
  prolly_cursor_free(c);
  prolly_verify_report rep;
  OK(prolly_store_verify(st, &rep));
  prolly_map_free(m);
  prolly_store_free(st);
  prolly_schema_free(s);
}

int main(int argc, char **argv) {
  if (argc == 6) {
    int64_t n = strtoll(argv[5], NULL, 10);
    if (strcmp(argv[1], "write") == 0) write_map(argv[2], argv[3], argv[4], n);
    else if (strcmp(argv[1], "check") == 0) check_map(argv[2], argv[3], argv[4], n);
    else return 2;
    printf("interop %s %s: ok\n", argv[1], argv[3]);
    return 0;
  }
  char dir[256];
  make_temp_dir(dir, sizeof dir);
  write_map(dir, "from-c", "c-row", 3000);
  check_map(dir, "from-c", "c-row", 3000);
  rm_rf(dir);
  printf("interop: %d checks passed\n", g_checks);
  return 0;
}
