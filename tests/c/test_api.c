/* Assertion tests of every API group of prollystore.h, including error paths. */
#include "common.h"

#include <stdint.h>

/* Schema used by most tests: key (int64), value (string nullable, int32). */
static prolly_schema *kv_schema(void) {
  prolly_type key[] = {{PROLLY_ENCODING_INT64, 0}};
  prolly_type val[] = {{PROLLY_ENCODING_STRING, 1}, {PROLLY_ENCODING_INT32, 0}};
  prolly_schema *s = NULL;
  OK(prolly_schema_new(key, 1, val, 2, &s));
  return s;
}

/* Encodes key i into the key builder; returns the tuple (owned by the builder). */
static const uint8_t *key_of(prolly_tuple_builder *kb, int64_t i, size_t *len) {
  const uint8_t *t = NULL;
  OK(prolly_tuple_builder_put_int64(kb, 0, i));
  OK(prolly_tuple_builder_build(kb, &t, len));
  return t;
}

static void test_results_and_nulls(void) {
  CHECK(strlen(prolly_version()) > 0);
  CHECK(strcmp(prolly_result_message(PROLLY_RESULT_OK), "ok") == 0);
  CHECK(strcmp(prolly_result_message(-5), "unknown result code") == 0);
  CHECK(strcmp(prolly_result_message(9999), "unknown result code") == 0);
  CHECK(strcmp(prolly_result_message(3), "unknown result code") == 0);
  /* NULL arguments. */
  EXPECT(prolly_store_new_memory(PROLLY_HASH_PROFILE_BLAKE3, NULL), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  char msg[256];
  size_t n = prolly_last_error_message(msg, sizeof msg);
  CHECK(n > 0 && strstr(msg, "out_store") != NULL);
  /* Truncation keeps a NUL and reports the full length. */
  char small[4];
  CHECK(prolly_last_error_message(small, sizeof small) == n && strlen(small) == 3);
  CHECK(prolly_last_error_message(NULL, 0) == n);
  prolly_store *st = NULL;
  EXPECT(prolly_store_new_memory(99, &st), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  CHECK(st == NULL); /* outputs untouched on failure */
  EXPECT(prolly_store_create_file(NULL, 1, &st), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  EXPECT(prolly_store_open_file("/nonexistent/prolly", 0, &st), PROLLY_RESULT_ERR_IO);
  EXPECT(prolly_store_open_file("/tmp", 0x80, &st), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  prolly_address a;
  EXPECT(prolly_store_root_get(NULL, "x", &a), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  EXPECT(prolly_map_get(NULL, NULL, 0, NULL, NULL), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  EXPECT(prolly_cursor_next(NULL, NULL), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  EXPECT(prolly_diff_next(NULL, NULL), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  EXPECT(prolly_merge(NULL, NULL, NULL, 0, NULL), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  EXPECT(prolly_copy_tree(NULL, NULL, NULL, NULL), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  EXPECT(prolly_store_verify(NULL, NULL), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  EXPECT(prolly_tuple_builder_put_int64(NULL, 0, 1), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  int64_t v;
  bool is_null;
  EXPECT(prolly_field_int64(NULL, 0, (const uint8_t *)"", 0, 0, &v, &is_null),
         PROLLY_RESULT_ERR_NULL_ARGUMENT);
  /* Freeing NULL is a no-op. */
  prolly_store_free(NULL);
  prolly_schema_free(NULL);
  prolly_map_free(NULL);
  prolly_cursor_free(NULL);
  prolly_diff_free(NULL);
  prolly_tuple_builder_free(NULL);
  prolly_map_builder_free(NULL);
  prolly_merge_result_free(NULL);
}

static void test_schema_errors(void) {
  prolly_schema *s = NULL;
  prolly_type bad[] = {{5, 0}};
  prolly_type ok[] = {{PROLLY_ENCODING_INT64, 0}};
  prolly_type json[] = {{PROLLY_ENCODING_JSON, 0}};
  EXPECT(prolly_schema_new(bad, 1, ok, 1, &s), PROLLY_RESULT_ERR_INVALID_SCHEMA);
  EXPECT(prolly_schema_new(ok, 1, bad, 1, &s), PROLLY_RESULT_ERR_INVALID_SCHEMA);
  EXPECT(prolly_schema_new(ok, 0, ok, 1, &s), PROLLY_RESULT_ERR_INVALID_SCHEMA);
  EXPECT(prolly_schema_new(json, 1, ok, 1, &s), PROLLY_RESULT_ERR_INVALID_SCHEMA);
  EXPECT(prolly_schema_new(NULL, 1, ok, 1, &s), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  CHECK(s == NULL);
  OK(prolly_schema_new(ok, 1, json, 1, &s)); /* JSON is fine in values */
  size_t n = 0;
  OK(prolly_schema_field_count(s, PROLLY_SIDE_VALUE, &n));
  CHECK(n == 1);
  EXPECT(prolly_schema_field_count(s, 7, &n), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  prolly_schema_free(s);
}

/* Every encoding through a tuple builder and back through the typed getters. */
static void test_all_encodings(void) {
  enum {
    F_I8, F_U8, F_I16, F_U16, F_I32, F_U32, F_I64, F_U64, F_F32, F_F64, F_BIT, F_H128, F_YEAR,
    F_DATE, F_TIME, F_DT, F_ENUM, F_SET, F_ADDR, F_CELL, F_STR, F_BYTES, F_DEC, F_JSON, F_GEOM,
    F_EXT, F_ADAPT, F_BOOL, F_NULLABLE, N_FIELDS
  };
  const uint8_t encs[N_FIELDS] = {
      PROLLY_ENCODING_INT8, PROLLY_ENCODING_UINT8, PROLLY_ENCODING_INT16, PROLLY_ENCODING_UINT16,
      PROLLY_ENCODING_INT32, PROLLY_ENCODING_UINT32, PROLLY_ENCODING_INT64, PROLLY_ENCODING_UINT64,
      PROLLY_ENCODING_FLOAT32, PROLLY_ENCODING_FLOAT64, PROLLY_ENCODING_BIT64,
      PROLLY_ENCODING_HASH128, PROLLY_ENCODING_YEAR, PROLLY_ENCODING_DATE, PROLLY_ENCODING_TIME,
      PROLLY_ENCODING_DATETIME, PROLLY_ENCODING_ENUM, PROLLY_ENCODING_SET,
      PROLLY_ENCODING_BYTES_ADDR, PROLLY_ENCODING_CELL, PROLLY_ENCODING_STRING,
      PROLLY_ENCODING_BYTES, PROLLY_ENCODING_DECIMAL, PROLLY_ENCODING_JSON,
      PROLLY_ENCODING_GEOMETRY, PROLLY_ENCODING_EXTENDED, PROLLY_ENCODING_STRING_ADAPTIVE,
      PROLLY_ENCODING_INT8, PROLLY_ENCODING_INT64};
  prolly_type vt[N_FIELDS];
  for (int i = 0; i < N_FIELDS; i++) {
    vt[i].encoding = encs[i];
    vt[i].nullable = (i == F_NULLABLE || i == F_ADDR);
  }
  prolly_type kt[] = {{PROLLY_ENCODING_INT64, 0}};
  prolly_schema *s = NULL;
  OK(prolly_schema_new(kt, 1, vt, N_FIELDS, &s));
  prolly_tuple_builder *b = NULL;
  OK(prolly_tuple_builder_new(s, PROLLY_SIDE_VALUE, &b));
  EXPECT(prolly_tuple_builder_new(s, 9, &b), PROLLY_RESULT_ERR_INVALID_ARGUMENT);

  prolly_hash128 h;
  for (int i = 0; i < 16; i++) h.bytes[i] = (uint8_t)i;
  prolly_cell cell;
  for (int i = 0; i < 17; i++) cell.bytes[i] = (uint8_t)(100 + i);
  prolly_date date = {2024, 2, 29};
  uint8_t coef[] = {0x30, 0x39}; /* 12345 */
  prolly_decimal dec = {PROLLY_DECIMAL_FORM_FINITE, -2, 1, coef, sizeof coef}; /* -123.45 */
  OK(prolly_tuple_builder_put_int8(b, F_I8, -8));
  OK(prolly_tuple_builder_put_uint8(b, F_U8, 200));
  OK(prolly_tuple_builder_put_int16(b, F_I16, -1600));
  OK(prolly_tuple_builder_put_uint16(b, F_U16, 60000));
  OK(prolly_tuple_builder_put_int32(b, F_I32, -320000));
  OK(prolly_tuple_builder_put_uint32(b, F_U32, 4000000000u));
  OK(prolly_tuple_builder_put_int64(b, F_I64, INT64_MIN));
  OK(prolly_tuple_builder_put_uint64(b, F_U64, UINT64_MAX));
  OK(prolly_tuple_builder_put_float32(b, F_F32, 1.5f));
  OK(prolly_tuple_builder_put_float64(b, F_F64, -2.25));
  OK(prolly_tuple_builder_put_bit64(b, F_BIT, 0xF0F0));
  OK(prolly_tuple_builder_put_hash128(b, F_H128, &h));
  OK(prolly_tuple_builder_put_year(b, F_YEAR, 1999));
  OK(prolly_tuple_builder_put_date(b, F_DATE, date));
  OK(prolly_tuple_builder_put_time(b, F_TIME, -3600000000LL));
  OK(prolly_tuple_builder_put_datetime(b, F_DT, 1700000000000000LL));
  OK(prolly_tuple_builder_put_enum(b, F_ENUM, 3));
  OK(prolly_tuple_builder_put_set(b, F_SET, 5));
  OK(prolly_tuple_builder_put_null(b, F_ADDR));
  OK(prolly_tuple_builder_put_cell(b, F_CELL, &cell));
  OK(prolly_tuple_builder_put_string(b, F_STR, "héllo", strlen("héllo")));
  OK(prolly_tuple_builder_put_bytes(b, F_BYTES, (const uint8_t *)"\x01\x02", 2));
  OK(prolly_tuple_builder_put_decimal(b, F_DEC, &dec));
  OK(prolly_tuple_builder_put_json(b, F_JSON, (const uint8_t *)"{}", 2));
  OK(prolly_tuple_builder_put_geometry(b, F_GEOM, (const uint8_t *)"GEO", 3));
  OK(prolly_tuple_builder_put_extended(b, F_EXT, (const uint8_t *)"EXT", 3));
  OK(prolly_tuple_builder_put_adaptive(b, F_ADAPT, (const uint8_t *)"small text", 10));
  OK(prolly_tuple_builder_put_bool(b, F_BOOL, true));
  /* Put errors. */
  EXPECT(prolly_tuple_builder_put_int32(b, F_I64, 1), PROLLY_RESULT_ERR_WRONG_ENCODING);
  EXPECT(prolly_tuple_builder_put_int64(b, N_FIELDS, 1), PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE);
  EXPECT(prolly_tuple_builder_put_year(b, F_YEAR, 1800), PROLLY_RESULT_ERR_BAD_VALUE);
  EXPECT(prolly_tuple_builder_put_string(b, F_STR, "\xff", 1), PROLLY_RESULT_ERR_BAD_VALUE);
  EXPECT(prolly_tuple_builder_put_string(b, F_STR, NULL, 3), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  const uint8_t *t = NULL;
  size_t tl = 0;
  OK(prolly_tuple_builder_build(b, &t, &tl));
  CHECK(t != NULL && tl > 0);

  bool nul = true;
  int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32; int64_t i64;
  uint64_t u64; float f32; double f64; bool bo;
  prolly_side V = PROLLY_SIDE_VALUE;
  OK(prolly_field_int8(s, V, t, tl, F_I8, &i8, &nul)); CHECK(!nul && i8 == -8);
  OK(prolly_field_uint8(s, V, t, tl, F_U8, &u8, &nul)); CHECK(!nul && u8 == 200);
  OK(prolly_field_int16(s, V, t, tl, F_I16, &i16, &nul)); CHECK(i16 == -1600);
  OK(prolly_field_uint16(s, V, t, tl, F_U16, &u16, &nul)); CHECK(u16 == 60000);
  OK(prolly_field_int32(s, V, t, tl, F_I32, &i32, &nul)); CHECK(i32 == -320000);
  OK(prolly_field_uint32(s, V, t, tl, F_U32, &u32, &nul)); CHECK(u32 == 4000000000u);
  OK(prolly_field_int64(s, V, t, tl, F_I64, &i64, &nul)); CHECK(i64 == INT64_MIN);
  OK(prolly_field_uint64(s, V, t, tl, F_U64, &u64, &nul)); CHECK(u64 == UINT64_MAX);
  OK(prolly_field_float32(s, V, t, tl, F_F32, &f32, &nul)); CHECK(f32 == 1.5f);
  OK(prolly_field_float64(s, V, t, tl, F_F64, &f64, &nul)); CHECK(f64 == -2.25);
  OK(prolly_field_bit64(s, V, t, tl, F_BIT, &u64, &nul)); CHECK(u64 == 0xF0F0);
  prolly_hash128 h2;
  OK(prolly_field_hash128(s, V, t, tl, F_H128, &h2, &nul)); CHECK(memcmp(&h, &h2, 16) == 0);
  OK(prolly_field_year(s, V, t, tl, F_YEAR, &u16, &nul)); CHECK(u16 == 1999);
  prolly_date d2;
  OK(prolly_field_date(s, V, t, tl, F_DATE, &d2, &nul));
  CHECK(d2.year == 2024 && d2.month == 2 && d2.day == 29);
  OK(prolly_field_time(s, V, t, tl, F_TIME, &i64, &nul)); CHECK(i64 == -3600000000LL);
  OK(prolly_field_datetime(s, V, t, tl, F_DT, &i64, &nul)); CHECK(i64 == 1700000000000000LL);
  OK(prolly_field_enum(s, V, t, tl, F_ENUM, &u16, &nul)); CHECK(u16 == 3);
  OK(prolly_field_set(s, V, t, tl, F_SET, &u64, &nul)); CHECK(u64 == 5);
  prolly_address addr;
  memset(&addr, 7, sizeof addr);
  OK(prolly_field_address(s, V, t, tl, F_ADDR, &addr, &nul));
  CHECK(nul && addr.bytes[0] == 7); /* NULL reported, value untouched */
  prolly_cell c2;
  OK(prolly_field_cell(s, V, t, tl, F_CELL, &c2, &nul)); CHECK(memcmp(&cell, &c2, 17) == 0);
  const uint8_t *p; size_t pl;
  OK(prolly_field_string(s, V, t, tl, F_STR, &p, &pl, &nul));
  CHECK(!nul && pl == strlen("héllo") && memcmp(p, "héllo", pl) == 0);
  CHECK(p >= t && p + pl <= t + tl); /* points into the tuple: no copy */
  OK(prolly_field_bytes(s, V, t, tl, F_BYTES, &p, &pl, &nul)); CHECK(pl == 2 && p[1] == 2);
  prolly_decimal d3;
  OK(prolly_field_decimal(s, V, t, tl, F_DEC, &d3, &nul));
  CHECK(d3.form == PROLLY_DECIMAL_FORM_FINITE && d3.exponent == -2 && d3.negative);
  /* Coefficient words are big-endian; compare the numeric value. */
  uint64_t cv = 0;
  for (size_t i = 0; i < d3.coefficient_len; i++) cv = (cv << 8) | d3.coefficient[i];
  CHECK(cv == 12345);
  OK(prolly_field_json(s, V, t, tl, F_JSON, &p, &pl, &nul)); CHECK(pl == 2 && p[0] == '{');
  OK(prolly_field_geometry(s, V, t, tl, F_GEOM, &p, &pl, &nul)); CHECK(pl == 3);
  OK(prolly_field_extended(s, V, t, tl, F_EXT, &p, &pl, &nul)); CHECK(pl == 3 && p[0] == 'E');
  prolly_adaptive ad;
  OK(prolly_field_adaptive(s, V, t, tl, F_ADAPT, &ad, &nul));
  CHECK(!ad.out_of_band && ad.len == 10 && memcmp(ad.data, "small text", 10) == 0);
  OK(prolly_field_bool(s, V, t, tl, F_BOOL, &bo, &nul)); CHECK(bo);
  i64 = 42;
  OK(prolly_field_int64(s, V, t, tl, F_NULLABLE, &i64, &nul)); CHECK(nul && i64 == 42);
  /* Getter errors. */
  EXPECT(prolly_field_int32(s, V, t, tl, F_I64, &i32, &nul), PROLLY_RESULT_ERR_WRONG_ENCODING);
  EXPECT(prolly_field_int64(s, V, t, tl, 500, &i64, &nul), PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE);
  EXPECT(prolly_field_int64(s, V, t, 1, F_I64, &i64, &nul), PROLLY_RESULT_ERR_BAD_TUPLE);
  EXPECT(prolly_field_int64(s, V, t, tl, F_I64, NULL, &nul), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  /* A non-nullable field left unset fails at build time. */
  OK(prolly_tuple_builder_put_int8(b, F_I8, 1));
  EXPECT(prolly_tuple_builder_build(b, &t, &tl), PROLLY_RESULT_ERR_BAD_VALUE);
  prolly_tuple_builder_free(b);
  prolly_schema_free(s);
}

/* Builds keys 0, 2, 4, ... (2n-2) with value ("v<i>", i). */
static prolly_map *build_evens(prolly_store *st, prolly_schema *s, int n) {
  prolly_tuple_builder *kb, *vb;
  OK(prolly_tuple_builder_new(s, PROLLY_SIDE_KEY, &kb));
  OK(prolly_tuple_builder_new(s, PROLLY_SIDE_VALUE, &vb));
  prolly_map_builder *mb = NULL;
  OK(prolly_map_builder_new(st, s, &mb));
  for (int i = 0; i < n; i++) {
    char txt[32];
    int len = snprintf(txt, sizeof txt, "v%d", 2 * i);
    OK(prolly_tuple_builder_put_int64(kb, 0, 2 * i));
    OK(prolly_tuple_builder_put_string(vb, 0, txt, (size_t)len));
    OK(prolly_tuple_builder_put_int32(vb, 1, 2 * i));
    OK(prolly_map_builder_append_row(mb, kb, vb));
  }
  /* Out of order: rejected, builder still usable. */
  OK(prolly_tuple_builder_put_int64(kb, 0, 0));
  OK(prolly_tuple_builder_put_int32(vb, 1, 0));
  EXPECT(prolly_map_builder_append_row(mb, kb, vb), PROLLY_RESULT_ERR_UNSORTED);
  EXPECT(prolly_map_builder_append_row(mb, vb, kb), PROLLY_RESULT_ERR_INCOMPATIBLE);
  prolly_map *m = NULL;
  OK(prolly_map_builder_finish(mb, &m));
  EXPECT(prolly_map_builder_finish(mb, &m), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  prolly_map_builder_free(mb);
  prolly_tuple_builder_free(kb);
  prolly_tuple_builder_free(vb);
  return m;
}

static int64_t key_int(prolly_schema *s, const prolly_row *r) {
  int64_t k = -1;
  bool nul;
  OK(prolly_field_int64(s, PROLLY_SIDE_KEY, r->key, r->key_len, 0, &k, &nul));
  return k;
}

static void test_maps_cursors_diffs_roots(void) {
  prolly_store *st = NULL;
  OK(prolly_store_new_memory(PROLLY_HASH_PROFILE_BLAKE3, &st));
  prolly_schema *s = kv_schema();
  const int N = 3000;
  prolly_map *m = build_evens(st, s, N);
  uint64_t count = 0;
  OK(prolly_map_count(m, &count));
  CHECK(count == (uint64_t)N);

  prolly_tuple_builder *kb;
  OK(prolly_tuple_builder_new(s, PROLLY_SIDE_KEY, &kb));
  size_t kl;
  const uint8_t *k = key_of(kb, 1234, &kl);
  const uint8_t *v = NULL;
  size_t vl = 0;
  OK(prolly_map_get(m, k, kl, &v, &vl));
  const uint8_t *sp; size_t sl; bool nul;
  OK(prolly_field_string(s, PROLLY_SIDE_VALUE, v, vl, 0, &sp, &sl, &nul));
  CHECK(sl == 5 && memcmp(sp, "v1234", 5) == 0);
  k = key_of(kb, 1235, &kl);
  v = NULL;
  EXPECT(prolly_map_get(m, k, kl, &v, &vl), PROLLY_RESULT_NOT_FOUND);
  CHECK(v == NULL);
  prolly_row row;
  OK(prolly_map_get_ordinal(m, 10, &row));
  CHECK(key_int(s, &row) == 20);
  EXPECT(prolly_map_get_ordinal(m, (uint64_t)N, &row), PROLLY_RESULT_NOT_FOUND);

  /* Full forward scan. */
  prolly_bound open = {PROLLY_BOUND_KIND_UNBOUNDED, NULL, 0};
  prolly_cursor *c = NULL;
  OK(prolly_map_range(m, &open, &open, PROLLY_DIRECTION_FORWARD, &c));
  int64_t expect = 0;
  int rows = 0;
  prolly_result r;
  while ((r = prolly_cursor_next(c, &row)) == PROLLY_RESULT_OK) {
    CHECK(key_int(s, &row) == expect);
    expect += 2;
    rows++;
  }
  EXPECT(r, PROLLY_RESULT_END);
  EXPECT(prolly_cursor_next(c, &row), PROLLY_RESULT_END);
  CHECK(rows == N);
  /* A commit while a cursor is open is refused. */
  prolly_address root;
  OK(prolly_map_root(m, &root));
  prolly_root_update up = {"main", NULL, &root};
  uint64_t gen = 0;
  EXPECT(prolly_store_commit(st, &up, 1, &gen), PROLLY_RESULT_ERR_BUSY);
  prolly_cursor_free(c);

  /* Bounded ranges: [100, 200) forward, (100, 200] backward. */
  size_t l1, l2;
  uint8_t lo[64], hi[64];
  k = key_of(kb, 100, &l1);
  memcpy(lo, k, l1);
  k = key_of(kb, 200, &l2);
  memcpy(hi, k, l2);
  prolly_bound b_lo_in = {PROLLY_BOUND_KIND_INCLUDED, lo, l1};
  prolly_bound b_hi_ex = {PROLLY_BOUND_KIND_EXCLUDED, hi, l2};
  OK(prolly_map_range(m, &b_lo_in, &b_hi_ex, PROLLY_DIRECTION_FORWARD, &c));
  rows = 0;
  expect = 100;
  while (prolly_cursor_next(c, &row) == PROLLY_RESULT_OK) {
    CHECK(key_int(s, &row) == expect);
    expect += 2;
    rows++;
  }
  CHECK(rows == 50);
  prolly_cursor_free(c);
  /* The whole map again, one row and then a batch of up to 7, alternately. */
  OK(prolly_map_range(m, &open, &open, PROLLY_DIRECTION_FORWARD, &c));
  prolly_row batch[7];
  size_t batch_len = 0;
  rows = 0;
  expect = 0;
  for (;;) {
    r = prolly_cursor_next(c, &row);
    if (r != PROLLY_RESULT_OK) break;
    CHECK(key_int(s, &row) == expect);
    expect += 2;
    rows++;
    r = prolly_cursor_next_batch(c, batch, 7, &batch_len);
    if (r != PROLLY_RESULT_OK) break;
    CHECK(batch_len >= 1 && batch_len <= 7);
    for (size_t i = 0; i < batch_len; i++) {
      CHECK(key_int(s, &batch[i]) == expect);
      expect += 2;
      rows++;
    }
  }
  EXPECT(r, PROLLY_RESULT_END);
  CHECK(rows == N);
  EXPECT(prolly_cursor_next_batch(c, batch, 7, &batch_len), PROLLY_RESULT_END);
  CHECK(batch_len == 0);
  EXPECT(prolly_cursor_next_batch(c, batch, 0, &batch_len), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  prolly_cursor_free(c);
  prolly_bound b_lo_ex = {PROLLY_BOUND_KIND_EXCLUDED, lo, l1};
  prolly_bound b_hi_in = {PROLLY_BOUND_KIND_INCLUDED, hi, l2};
  OK(prolly_map_range(m, &b_lo_ex, &b_hi_in, PROLLY_DIRECTION_BACKWARD, &c));
  rows = 0;
  expect = 200;
  while (prolly_cursor_next(c, &row) == PROLLY_RESULT_OK) {
    CHECK(key_int(s, &row) == expect);
    expect -= 2;
    rows++;
  }
  CHECK(rows == 50);
  prolly_cursor_free(c);
  prolly_bound bad = {7, NULL, 0};
  EXPECT(prolly_map_range(m, &bad, &open, 0, &c), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  EXPECT(prolly_map_range(m, &open, &open, 2, &c), PROLLY_RESULT_ERR_INVALID_ARGUMENT);

  /* Edits: delete 0, put 1, change 2. */
  prolly_tuple_builder *vb;
  OK(prolly_tuple_builder_new(s, PROLLY_SIDE_VALUE, &vb));
  uint8_t k0[64], k1[64], k2[64], v1[64], v2[64];
  size_t k0l, k1l, k2l, v1l, v2l;
  k = key_of(kb, 0, &k0l); memcpy(k0, k, k0l);
  k = key_of(kb, 1, &k1l); memcpy(k1, k, k1l);
  k = key_of(kb, 2, &k2l); memcpy(k2, k, k2l);
  OK(prolly_tuple_builder_put_int32(vb, 1, -1));
  OK(prolly_tuple_builder_build(vb, &v, &v1l)); memcpy(v1, v, v1l);
  OK(prolly_tuple_builder_put_string(vb, 0, "two", 3));
  OK(prolly_tuple_builder_put_int32(vb, 1, 2));
  OK(prolly_tuple_builder_build(vb, &v, &v2l)); memcpy(v2, v, v2l);
  prolly_edit edits[] = {{k0, k0l, NULL, 0}, {k1, k1l, v1, v1l}, {k2, k2l, v2, v2l}};
  prolly_map *m2 = NULL;
  OK(prolly_map_apply(m, edits, 3, &m2));
  OK(prolly_map_count(m2, &count));
  CHECK(count == (uint64_t)N);
  OK(prolly_map_get(m2, k1, k1l, &v, &vl));
  CHECK(vl == v1l && memcmp(v, v1, vl) == 0);
  EXPECT(prolly_map_get(m2, k0, k0l, &v, &vl), PROLLY_RESULT_NOT_FOUND);

  /* Diff m -> m2. */
  prolly_diff *d = NULL;
  OK(prolly_map_diff(m, m2, &d));
  prolly_diff_entry e;
  OK(prolly_diff_next(d, &e));
  CHECK(e.kind == PROLLY_DIFF_KIND_REMOVED && e.to_value == NULL && e.from_value != NULL);
  OK(prolly_diff_next(d, &e));
  CHECK(e.kind == PROLLY_DIFF_KIND_ADDED && e.from_value == NULL);
  OK(prolly_diff_next(d, &e));
  CHECK(e.kind == PROLLY_DIFF_KIND_MODIFIED && e.to_value_len == v2l);
  EXPECT(prolly_diff_next(d, &e), PROLLY_RESULT_END);
  /* Commit refused while the diff is open. */
  EXPECT(prolly_store_commit(st, &up, 1, &gen), PROLLY_RESULT_ERR_BUSY);
  prolly_diff_free(d);

  /* Roots: compare-and-swap. */
  prolly_address got;
  EXPECT(prolly_store_root_get(st, "main", &got), PROLLY_RESULT_NOT_FOUND);
  OK(prolly_store_commit(st, &up, 1, &gen));
  CHECK(gen == 1);
  OK(prolly_store_root_get(st, "main", &got));
  CHECK(memcmp(&got, &root, sizeof got) == 0);
  EXPECT(prolly_store_commit(st, &up, 1, &gen), PROLLY_RESULT_ERR_ROOT_CONFLICT); /* not absent */
  prolly_address root2;
  OK(prolly_map_root(m2, &root2));
  prolly_root_update wrong = {"main", &root2, &root2};
  EXPECT(prolly_store_commit(st, &wrong, 1, &gen), PROLLY_RESULT_ERR_ROOT_CONFLICT);
  prolly_root_update good = {"main", &root, &root2};
  prolly_address missing;
  memset(&missing, 0xAB, sizeof missing);
  prolly_root_update miss = {"other", NULL, &missing};
  prolly_root_update both[] = {good, miss};
  EXPECT(prolly_store_commit(st, both, 2, &gen), PROLLY_RESULT_ERR_MISSING_CHUNK);
  OK(prolly_store_root_get(st, "main", &got));
  CHECK(memcmp(&got, &root, sizeof got) == 0); /* all or nothing */
  OK(prolly_store_commit(st, &good, 1, &gen));
  prolly_root_update del = {"main", &root2, NULL};
  OK(prolly_store_commit(st, &del, 1, &gen));
  EXPECT(prolly_store_root_get(st, "main", &got), PROLLY_RESULT_NOT_FOUND);
  prolly_root_update noname = {"", NULL, &root};
  EXPECT(prolly_store_commit(st, &noname, 1, &gen), PROLLY_RESULT_ERR_INVALID_ARGUMENT);

  /* Opening a map at an address not in the store. */
  prolly_map *bad_map = NULL;
  EXPECT(prolly_map_open(st, s, &missing, &bad_map), PROLLY_RESULT_ERR_MISSING_CHUNK);
  CHECK(bad_map == NULL);
  prolly_map *again = NULL;
  OK(prolly_map_open(st, s, &root, &again));
  OK(prolly_map_count(again, &count));
  CHECK(count == (uint64_t)N);
  prolly_map *empty = NULL;
  OK(prolly_map_new_empty(st, s, &empty));
  OK(prolly_map_count(empty, &count));
  CHECK(count == 0);
  prolly_verify_report rep;
  OK(prolly_store_verify(st, &rep));
  CHECK(rep.chunks > 0 && rep.messages == rep.chunks);

  /* Merge: base m; left m2 (0 deleted, 1 added, 2 changed); right changes 2 differently and
   * deletes 4. */
  uint8_t k4[64], v3[64];
  size_t k4l, v3l;
  k = key_of(kb, 4, &k4l); memcpy(k4, k, k4l);
  OK(prolly_tuple_builder_put_string(vb, 0, "TWO", 3));
  OK(prolly_tuple_builder_put_int32(vb, 1, 2));
  OK(prolly_tuple_builder_build(vb, &v, &v3l)); memcpy(v3, v, v3l);
  prolly_edit redits[] = {{k2, k2l, v3, v3l}, {k4, k4l, NULL, 0}};
  prolly_map *right = NULL;
  OK(prolly_map_apply(m, redits, 2, &right));
  prolly_merge_result *mr = NULL;
  OK(prolly_merge(m, m2, right, PROLLY_MERGE_POLICY_REPORT, &mr));
  size_t nconf = 0;
  OK(prolly_merge_result_conflict_count(mr, &nconf));
  CHECK(nconf == 1);
  prolly_conflict cf;
  OK(prolly_merge_result_conflict(mr, 0, &cf));
  CHECK(cf.key_len == k2l && memcmp(cf.key, k2, k2l) == 0);
  CHECK(cf.left_len == v2l && memcmp(cf.left, v2, v2l) == 0);
  CHECK(cf.right_len == v3l && memcmp(cf.right, v3, v3l) == 0 && cf.base != NULL);
  EXPECT(prolly_merge_result_conflict(mr, 1, &cf), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  prolly_map *merged = NULL;
  OK(prolly_merge_result_map(mr, &merged));
  OK(prolly_map_count(merged, &count));
  CHECK(count == (uint64_t)N - 1); /* -0 +1 -4 */
  OK(prolly_map_get(merged, k2, k2l, &v, &vl));
  CHECK(vl == v2l && memcmp(v, v2, vl) == 0); /* conflict keeps left */
  prolly_merge_result_free(mr);
  prolly_map_free(merged);
  OK(prolly_merge(m, m2, right, PROLLY_MERGE_POLICY_PREFER_RIGHT, &mr));
  OK(prolly_merge_result_conflict_count(mr, &nconf));
  CHECK(nconf == 0);
  OK(prolly_merge_result_map(mr, &merged));
  OK(prolly_map_get(merged, k2, k2l, &v, &vl));
  CHECK(vl == v3l && memcmp(v, v3, vl) == 0);
  EXPECT(prolly_merge(m, m2, right, 3, &mr), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  prolly_merge_result_free(mr);
  prolly_map_free(merged);

  /* Maps from different stores do not mix. */
  prolly_store *other = NULL;
  OK(prolly_store_new_memory(PROLLY_HASH_PROFILE_BLAKE3, &other));
  prolly_map *om = NULL;
  OK(prolly_map_new_empty(other, s, &om));
  EXPECT(prolly_map_diff(m, om, &d), PROLLY_RESULT_ERR_INCOMPATIBLE);
  EXPECT(prolly_merge(m, m2, om, 0, &mr), PROLLY_RESULT_ERR_INCOMPATIBLE);
  prolly_map_free(om);
  prolly_store_free(other);

  /* Addresses as text. */
  char txt[40];
  OK(prolly_address_to_string(&root, txt, sizeof txt));
  CHECK(strlen(txt) == 32);
  EXPECT(prolly_address_to_string(&root, txt, 10), PROLLY_RESULT_ERR_BUFFER_TOO_SMALL);
  prolly_address parsed;
  OK(prolly_address_from_string(txt, 32, &parsed));
  CHECK(memcmp(&parsed, &root, sizeof parsed) == 0);
  EXPECT(prolly_address_from_string("nope", 4, &parsed), PROLLY_RESULT_ERR_INVALID_ARGUMENT);

  prolly_map_free(right);
  prolly_map_free(empty);
  prolly_map_free(again);
  prolly_map_free(m2);
  /* The store handle may go first: maps keep the store alive. */
  prolly_store_free(st);
  OK(prolly_map_count(m, &count));
  prolly_map_free(m);
  prolly_tuple_builder_free(kb);
  prolly_tuple_builder_free(vb);
  prolly_schema_free(s);
}

static void test_file_store_copy_blobs(void) {
  char dir[256];
  make_temp_dir(dir, sizeof dir);
  prolly_store *mem = NULL, *fs = NULL;
  OK(prolly_store_new_memory(PROLLY_HASH_PROFILE_DOLT, &mem));
  prolly_schema *s = kv_schema();
  prolly_map *m = build_evens(mem, s, 2000);
  prolly_address root;
  OK(prolly_map_root(m, &root));
  OK(prolly_store_create_file(dir, PROLLY_HASH_PROFILE_DOLT, &fs));
  prolly_store *second = NULL;
  EXPECT(prolly_store_open_file(dir, PROLLY_OPEN_FLAGS_WRITE, &second), PROLLY_RESULT_ERR_LOCKED);
  EXPECT(prolly_store_create_file(dir, PROLLY_HASH_PROFILE_BLAKE3, &second),
         PROLLY_RESULT_ERR_LOCKED);
  uint64_t copied = 0;
  OK(prolly_copy_tree(mem, fs, &root, &copied));
  CHECK(copied > 1);
  OK(prolly_copy_tree(mem, fs, &root, &copied));
  CHECK(copied == 0); /* already there */
  prolly_root_update up = {"main", NULL, &root};
  uint64_t gen = 0;
  OK(prolly_store_commit(fs, &up, 1, &gen));
  CHECK(gen >= 1);

  /* A large adaptive value goes out of band into the file store. */
  prolly_type kt[] = {{PROLLY_ENCODING_INT64, 0}};
  prolly_type vt[] = {{PROLLY_ENCODING_BYTES_ADAPTIVE, 0}};
  prolly_schema *bs = NULL;
  OK(prolly_schema_new(kt, 1, vt, 1, &bs));
  prolly_tuple_builder *vb = NULL;
  OK(prolly_tuple_builder_new(bs, PROLLY_SIDE_VALUE, &vb));
  enum { BIG = 100000 };
  uint8_t *big = malloc(BIG);
  for (int i = 0; i < BIG; i++) big[i] = (uint8_t)(i * 7);
  OK(prolly_tuple_builder_put_adaptive(vb, 0, big, BIG));
  const uint8_t *t; size_t tl;
  EXPECT(prolly_tuple_builder_build(vb, &t, &tl), PROLLY_RESULT_ERR_BAD_VALUE); /* no store */
  OK(prolly_tuple_builder_put_adaptive(vb, 0, big, BIG));
  OK(prolly_tuple_builder_build_in(vb, fs, &t, &tl));
  prolly_adaptive ad; bool nul;
  OK(prolly_field_adaptive(bs, PROLLY_SIDE_VALUE, t, tl, 0, &ad, &nul));
  CHECK(ad.out_of_band && ad.len == BIG && ad.data == NULL);
  size_t need = 0;
  uint8_t tiny[8];
  EXPECT(prolly_store_read_blob(fs, &ad.blob, tiny, sizeof tiny, &need),
         PROLLY_RESULT_ERR_BUFFER_TOO_SMALL);
  CHECK(need == BIG);
  uint8_t *back = malloc(BIG);
  OK(prolly_store_read_blob(fs, &ad.blob, back, BIG, &need));
  CHECK(need == BIG && memcmp(back, big, BIG) == 0);
  /* A map node is not a blob: the caller's mistake, not damage. */
  EXPECT(prolly_store_read_blob(fs, &root, back, BIG, &need), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  free(back);
  free(big);
  prolly_root_update blob_root = {"blob", NULL, &ad.blob};
  OK(prolly_store_commit(fs, &blob_root, 1, &gen));
  prolly_tuple_builder_free(vb);
  prolly_schema_free(bs);

  prolly_verify_report rep;
  OK(prolly_store_verify(fs, &rep));
  CHECK(rep.files >= 1 && rep.chunks >= copied);
  prolly_store_free(fs);

  /* Reopen read-only: the root and the map are there; writes are refused. */
  prolly_store *ro = NULL;
  OK(prolly_store_open_file(dir, 0, &ro));
  prolly_address got;
  OK(prolly_store_root_get(ro, "main", &got));
  CHECK(memcmp(&got, &root, sizeof got) == 0);
  prolly_map *fm = NULL;
  OK(prolly_map_open(ro, s, &got, &fm));
  uint64_t count = 0;
  OK(prolly_map_count(fm, &count));
  CHECK(count == 2000);
  prolly_diff *d = NULL;
  OK(prolly_map_diff(fm, fm, &d));
  prolly_diff_entry e;
  EXPECT(prolly_diff_next(d, &e), PROLLY_RESULT_END);
  prolly_diff_free(d);
  prolly_root_update up2 = {"x", NULL, &root};
  EXPECT(prolly_store_commit(ro, &up2, 1, &gen), PROLLY_RESULT_ERR_READ_ONLY);
  bool changed = true;
  OK(prolly_store_refresh(ro, &changed));
  CHECK(!changed);
  prolly_map *em = NULL;
  EXPECT(prolly_map_new_empty(ro, s, &em), PROLLY_RESULT_ERR_READ_ONLY);
  prolly_map_free(fm);
  prolly_store_free(ro);
  /* Creating with another hash profile is refused. */
  EXPECT(prolly_store_create_file(dir, PROLLY_HASH_PROFILE_BLAKE3, &second),
         PROLLY_RESULT_ERR_PROFILE_MISMATCH);

  prolly_map_free(m);
  prolly_store_free(mem);
  prolly_schema_free(s);
  rm_rf(dir);
}

/* Memory that freed memory stores keep for the next ones is given back on request. */
static void test_release_spare_memory(void) {
  prolly_store *st = NULL;
  OK(prolly_store_new_memory(PROLLY_HASH_PROFILE_BLAKE3, &st));
  prolly_store_free(st);
  size_t released = 1;
  EXPECT(prolly_release_spare_memory(NULL), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  OK(prolly_release_spare_memory(&released));
  OK(prolly_release_spare_memory(&released));
  CHECK(released == 0);
}

int main(void) {
  test_results_and_nulls();
  test_schema_errors();
  test_all_encodings();
  test_maps_cursors_diffs_roots();
  test_file_store_copy_blobs();
  test_release_spare_memory();
  printf("test_api: %d checks passed\n", g_checks);
  return 0;
}
