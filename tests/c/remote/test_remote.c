/* A remote store read in place from C (library built with the `remote` feature; compiled and
 * run by crates/ffi/tests/remote_c.rs): a file store's two maps are pushed to a remote, which
 * is then opened with prolly_remote_open and read with the ordinary map functions (point gets,
 * a range cursor, a diff) without cloning it; writes to it are refused.
 *
 *   test_remote [URL]   URL of an empty remote (default: file:// under a temporary directory)
 *
 * Schema: key (int64), value (string). */
#define _XOPEN_SOURCE 700
#include "../common.h"

#include <inttypes.h>

#define ROWS 5000
#define EDITS 10

static const uint8_t *key_of(prolly_tuple_builder *kb, int64_t i, size_t *len) {
  const uint8_t *t = NULL;
  OK(prolly_tuple_builder_put_int64(kb, 0, i));
  OK(prolly_tuple_builder_build(kb, &t, len));
  return t;
}

/* The value of row i: "row-i", or "edit-i" in the edited map. */
static int value_text(char *buf, size_t len, const char *prefix, int64_t i) {
  return snprintf(buf, len, "%s-%" PRId64, prefix, i);
}

/* Gets every `step`-th row of map m (schema s) and checks its value is "row-i". */
static void check_gets(prolly_map *m, prolly_schema *s, prolly_tuple_builder *kb, int64_t step) {
  for (int64_t i = 0; i < ROWS; i += step) {
    size_t kl, vl;
    const uint8_t *kt = key_of(kb, i, &kl), *val;
    OK(prolly_map_get(m, kt, kl, &val, &vl));
    const uint8_t *txt;
    size_t len;
    bool nul;
    char want[64];
    int wl = value_text(want, sizeof want, "row", i);
    OK(prolly_field_string(s, PROLLY_SIDE_VALUE, val, vl, 0, &txt, &len, &nul));
    CHECK(len == (size_t)wl && memcmp(txt, want, len) == 0);
  }
}

int main(int argc, char **argv) {
  char dir[256], path[512], url[600];
  make_temp_dir(dir, sizeof dir);
  if (argc > 1) snprintf(url, sizeof url, "%s", argv[1]);
  else snprintf(url, sizeof url, "file://%s/remote", dir);
  prolly_type k[] = {{PROLLY_ENCODING_INT64, 0}};
  prolly_type v[] = {{PROLLY_ENCODING_STRING, 0}};
  prolly_schema *s = NULL;
  OK(prolly_schema_new(k, 1, v, 1, &s));
  prolly_tuple_builder *kb, *vb;
  OK(prolly_tuple_builder_new(s, PROLLY_SIDE_KEY, &kb));
  OK(prolly_tuple_builder_new(s, PROLLY_SIDE_VALUE, &vb));

  /* A local store with map "m" and "m2" (m with EDITS rows changed), pushed to the remote. */
  snprintf(path, sizeof path, "%s/local", dir);
  prolly_store *local = NULL;
  OK(prolly_store_create_file(path, PROLLY_HASH_PROFILE_BLAKE3, &local));
  prolly_map_builder *mb;
  OK(prolly_map_builder_new(local, s, &mb));
  for (int64_t i = 0; i < ROWS; i++) {
    char txt[64];
    int len = value_text(txt, sizeof txt, "row", i);
    OK(prolly_tuple_builder_put_int64(kb, 0, i));
    OK(prolly_tuple_builder_put_string(vb, 0, txt, (size_t)len));
    OK(prolly_map_builder_append_row(mb, kb, vb));
  }
  prolly_map *m, *m2;
  OK(prolly_map_builder_finish(mb, &m));
  prolly_map_builder_free(mb);
  uint8_t keys[EDITS][16], vals[EDITS][32];
  prolly_edit edits[EDITS];
  for (int e = 0; e < EDITS; e++) {
    int64_t i = (int64_t)e * (ROWS / EDITS) + 7;
    size_t kl, vl;
    const uint8_t *kt = key_of(kb, i, &kl);
    memcpy(keys[e], kt, kl);
    char txt[32];
    int len = value_text(txt, sizeof txt, "edit", i);
    const uint8_t *vt;
    OK(prolly_tuple_builder_put_string(vb, 0, txt, (size_t)len));
    OK(prolly_tuple_builder_build(vb, &vt, &vl));
    memcpy(vals[e], vt, vl);
    edits[e] = (prolly_edit){keys[e], kl, vals[e], vl};
  }
  OK(prolly_map_apply(m, edits, EDITS, &m2));
  prolly_address r1, r2;
  OK(prolly_map_root(m, &r1));
  OK(prolly_map_root(m2, &r2));
  prolly_root_update ups[] = {{"m", NULL, &r1}, {"m2", NULL, &r2}};
  uint64_t gen, chunks = 0;
  OK(prolly_store_commit(local, ups, 2, &gen));
  prolly_map_free(m);
  prolly_map_free(m2);
  prolly_store_free(local);
  OK(prolly_store_open_file(path, PROLLY_OPEN_FLAGS_WRITE, &local));
  OK(prolly_remote_push(local, "origin", url, NULL, 0, &chunks));
  CHECK(chunks > 0);
  prolly_store_free(local);

  /* The remote, read in place. */
  prolly_store *remote = NULL;
  EXPECT(prolly_remote_open("no scheme", &remote), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  OK(prolly_remote_open(url, &remote));
  prolly_address got;
  OK(prolly_store_root_get(remote, "m", &got));
  CHECK(memcmp(&got, &r1, sizeof got) == 0);
  EXPECT(prolly_store_root_get(remote, "absent", &got), PROLLY_RESULT_NOT_FOUND);
  OK(prolly_map_open(remote, s, &r1, &m));
  OK(prolly_map_open(remote, s, &r2, &m2));
  uint64_t count;
  OK(prolly_map_count(m, &count));
  CHECK(count == ROWS);
  check_gets(m, s, kb, 397);
  size_t kl;
  const uint8_t *kt = key_of(kb, ROWS + 1, &kl), *val;
  size_t vl;
  EXPECT(prolly_map_get(m, kt, kl, &val, &vl), PROLLY_RESULT_NOT_FOUND);

  /* A handle with a small cache: trimmed between batches of gets, it holds at most its budget
     and reads the same rows again (evicted chunks are fetched again). */
  {
    prolly_store *small = NULL;
    prolly_map *sm = NULL;
    uint64_t held = 0;
    OK(prolly_remote_open_cached(url, 64 * 1024, &small));
    OK(prolly_map_open(small, s, &r1, &sm));
    for (int pass = 0; pass < 2; pass++) {
      check_gets(sm, s, kb, 211);
      OK(prolly_remote_trim(small, &held));
      CHECK(held <= 64 * 1024);
    }
    prolly_map_free(sm);
    prolly_store_free(small);
  }

  /* A range cursor over [1000, 3000). */
  uint8_t lo[16], hi[16];
  size_t lol, hil;
  kt = key_of(kb, 1000, &lol);
  memcpy(lo, kt, lol);
  kt = key_of(kb, 3000, &hil);
  memcpy(hi, kt, hil);
  prolly_bound lower = {PROLLY_BOUND_KIND_INCLUDED, lo, lol};
  prolly_bound upper = {PROLLY_BOUND_KIND_EXCLUDED, hi, hil};
  prolly_cursor *c;
  OK(prolly_map_range(m, &lower, &upper, PROLLY_DIRECTION_FORWARD, &c));
  prolly_row row;
  int64_t next = 1000;
  while (prolly_cursor_next(c, &row) == PROLLY_RESULT_OK) {
    int64_t key;
    bool nul;
    OK(prolly_field_int64(s, PROLLY_SIDE_KEY, row.key, row.key_len, 0, &key, &nul));
    CHECK(key == next);
    next++;
  }
  CHECK(next == 3000);
  prolly_cursor_free(c);

  /* The diff between the two maps: exactly the edited rows. */
  prolly_diff *d;
  OK(prolly_map_diff(m, m2, &d));
  prolly_diff_entry entry;
  int changed = 0;
  while (prolly_diff_next(d, &entry) == PROLLY_RESULT_OK) {
    CHECK(entry.kind == PROLLY_DIFF_KIND_MODIFIED);
    changed++;
  }
  CHECK(changed == EDITS);
  prolly_diff_free(d);

  /* Read-only: no commits, no pushes. */
  prolly_root_update up = {"m3", NULL, &r1};
  EXPECT(prolly_store_commit(remote, &up, 1, &gen), PROLLY_RESULT_ERR_READ_ONLY);
  EXPECT(prolly_remote_push(remote, "origin", url, NULL, 0, &chunks), PROLLY_RESULT_ERR_READ_ONLY);

  prolly_map_free(m);
  prolly_map_free(m2);
  prolly_store_free(remote);
  prolly_tuple_builder_free(kb);
  prolly_tuple_builder_free(vb);
  prolly_schema_free(s);
  rm_rf(dir);
  printf("test_remote: %d checks passed\n", g_checks);
  return 0;
}
