/* A tour of the C API: create a file store in a temporary directory, build a map of 5000
 * (int64 -> string) rows, commit it as root "main", reopen the store and read the map back,
 * scan a range, edit, and diff the edit against the original. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prollystore.h"

/* Prints the failing call with the library's detailed message and exits. */
static void check(prolly_result r, const char *what) {
  if (r != PROLLY_RESULT_OK) {
    char msg[512];
    prolly_last_error_message(msg, sizeof msg);
    fprintf(stderr, "%s: %s (%s)\n", what, prolly_result_message((int)r), msg);
    exit(1);
  }
}
#define TRY(call) check((call), #call)

static int rm_entry(const char *p, const struct stat *s, int f, struct FTW *w) {
  (void)s, (void)f, (void)w;
  return remove(p);
}

int main(void) {
  char dir[] = "/tmp/prolly-example-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  printf("prollystore %s, store in %s\n", prolly_version(), dir);

  /* Schema: key (id int64), value (name string, nullable). */
  prolly_type key_types[] = {{PROLLY_ENCODING_INT64, 0}};
  prolly_type value_types[] = {{PROLLY_ENCODING_STRING, 1}};
  prolly_schema *schema = NULL;
  TRY(prolly_schema_new(key_types, 1, value_types, 1, &schema));
  prolly_tuple_builder *kb = NULL, *vb = NULL;
  TRY(prolly_tuple_builder_new(schema, PROLLY_SIDE_KEY, &kb));
  TRY(prolly_tuple_builder_new(schema, PROLLY_SIDE_VALUE, &vb));

  /* Build and commit. */
  prolly_store *store = NULL;
  TRY(prolly_store_create_file(dir, PROLLY_HASH_PROFILE_DOLT, &store));
  prolly_map_builder *mb = NULL;
  TRY(prolly_map_builder_new(store, schema, &mb));
  for (int64_t id = 0; id < 5000; id++) {
    char name[32];
    int n = snprintf(name, sizeof name, "user-%05" PRId64, id);
    TRY(prolly_tuple_builder_put_int64(kb, 0, id));
    TRY(prolly_tuple_builder_put_string(vb, 0, name, (size_t)n));
    TRY(prolly_map_builder_append_row(mb, kb, vb));
  }
  prolly_map *map = NULL;
  TRY(prolly_map_builder_finish(mb, &map));
  prolly_map_builder_free(mb);
  prolly_address root;
  TRY(prolly_map_root(map, &root));
  prolly_root_update update = {"main", NULL, &root};
  uint64_t generation = 0;
  TRY(prolly_store_commit(store, &update, 1, &generation));
  char text[33];
  TRY(prolly_address_to_string(&root, text, sizeof text));
  printf("committed root main = %s (generation %" PRIu64 ")\n", text, generation);
  prolly_map_free(map);
  prolly_store_free(store);

  /* Reopen as the writer and read back. */
  TRY(prolly_store_open_file(dir, PROLLY_OPEN_FLAGS_WRITE, &store));
  TRY(prolly_store_root_get(store, "main", &root));
  TRY(prolly_map_open(store, schema, &root, &map));
  uint64_t count = 0;
  TRY(prolly_map_count(map, &count));
  const uint8_t *key, *value;
  size_t key_len, value_len;
  TRY(prolly_tuple_builder_put_int64(kb, 0, 4242));
  TRY(prolly_tuple_builder_build(kb, &key, &key_len));
  TRY(prolly_map_get(map, key, key_len, &value, &value_len));
  const uint8_t *name;
  size_t name_len;
  bool is_null;
  TRY(prolly_field_string(schema, PROLLY_SIDE_VALUE, value, value_len, 0, &name, &name_len,
                          &is_null));
  printf("%" PRIu64 " rows; id 4242 -> %.*s\n", count, (int)name_len, (const char *)name);

  /* Range scan: ids 10..=14. */
  uint8_t lo[32], hi[32];
  size_t lo_len, hi_len;
  TRY(prolly_tuple_builder_put_int64(kb, 0, 10));
  TRY(prolly_tuple_builder_build(kb, &key, &lo_len));
  memcpy(lo, key, lo_len);
  TRY(prolly_tuple_builder_put_int64(kb, 0, 14));
  TRY(prolly_tuple_builder_build(kb, &key, &hi_len));
  memcpy(hi, key, hi_len);
  prolly_bound lower = {PROLLY_BOUND_KIND_INCLUDED, lo, lo_len};
  prolly_bound upper = {PROLLY_BOUND_KIND_INCLUDED, hi, hi_len};
  prolly_cursor *cursor = NULL;
  TRY(prolly_map_range(map, &lower, &upper, PROLLY_DIRECTION_FORWARD, &cursor));
  prolly_row row;
  printf("range [10, 14]:");
  while (prolly_cursor_next(cursor, &row) == PROLLY_RESULT_OK) {
    int64_t id;
    TRY(prolly_field_int64(schema, PROLLY_SIDE_KEY, row.key, row.key_len, 0, &id, &is_null));
    printf(" %" PRId64, id);
  }
  printf("\n");
  prolly_cursor_free(cursor);

  /* Edit: delete id 10, rename id 11. */
  uint8_t k11[32], v11[64];
  size_t k11_len, v11_len;
  TRY(prolly_tuple_builder_put_int64(kb, 0, 11));
  TRY(prolly_tuple_builder_build(kb, &key, &k11_len));
  memcpy(k11, key, k11_len);
  TRY(prolly_tuple_builder_put_string(vb, 0, "renamed", 7));
  TRY(prolly_tuple_builder_build(vb, &value, &v11_len));
  memcpy(v11, value, v11_len);
  prolly_edit edits[] = {{lo, lo_len, NULL, 0}, {k11, k11_len, v11, v11_len}};
  prolly_map *edited = NULL;
  TRY(prolly_map_apply(map, edits, 2, &edited));

  /* Diff the edit. */
  prolly_diff *diff = NULL;
  TRY(prolly_map_diff(map, edited, &diff));
  prolly_diff_entry entry;
  while (prolly_diff_next(diff, &entry) == PROLLY_RESULT_OK) {
    int64_t id;
    TRY(prolly_field_int64(schema, PROLLY_SIDE_KEY, entry.key, entry.key_len, 0, &id, &is_null));
    const char *kind = entry.kind == PROLLY_DIFF_KIND_ADDED     ? "added"
                       : entry.kind == PROLLY_DIFF_KIND_REMOVED ? "removed"
                                                                : "modified";
    printf("diff: id %" PRId64 " %s\n", id, kind);
  }
  prolly_diff_free(diff);

  /* Move "main" to the edit (compare-and-swap against the root we read). */
  prolly_address new_root;
  TRY(prolly_map_root(edited, &new_root));
  prolly_root_update move = {"main", &root, &new_root};
  TRY(prolly_store_commit(store, &move, 1, &generation));
  prolly_verify_report report;
  TRY(prolly_store_verify(store, &report));
  printf("verified %" PRIu64 " chunks in %" PRIu64 " files\n", report.chunks, report.files);

  prolly_map_free(edited);
  prolly_map_free(map);
  prolly_store_free(store);
  prolly_tuple_builder_free(kb);
  prolly_tuple_builder_free(vb);
  prolly_schema_free(schema);
  nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  return 0;
}
