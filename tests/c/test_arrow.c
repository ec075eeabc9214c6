/* Arrow C streams out of the C ABI, consumed with plain C (no Arrow library): the `pairs` table
 * of the vector database vecdb (ints, text, float, TIME, YEAR, SET, BIT) is read through
 * prolly_dolt_table_arrow in batches of 100 by walking each ArrowArray's children and buffers,
 * and every cell is checked against the CSV the dolt CLI printed (vecdb.expected); a key range
 * and an index range come back as the rows they should; a diff of the dolt_diff test database
 * comes back with dolt_diff's columns; the table cut into parts (prolly_dolt_split) and each part
 * read on its own (prolly_dolt_part_arrow) gives the same cells; every schema, array and stream
 * is released (valgrind and LeakSanitizer check it).
 *
 *   test_arrow [VECTORS_DIR]     default: $PROLLY_VECTORS. Run from the repository root. */
#include "common.h"

#include <stdint.h>

static char g_db[1024];
static char g_csv[1024];

/* Reads a whole file (NUL-terminated); exits if it cannot. */
static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) exit(1);
  b[n] = 0;
  fclose(f);
  *len = (size_t)n;
  return b;
}

/* Splits the CSV record at *p into up to `max` NUL-terminated fields (unquoted in place);
 * returns the field count and moves *p past the record. */
static int csv_record(char **p, char **fields, int max) {
  char *s = *p, *w = s;
  int n = 0;
  fields[n++] = w;
  int quoted = 0;
  for (;;) {
    char c = *s;
    if (c == 0) break;
    if (quoted) {
      if (c == '"' && s[1] == '"') {
        *w++ = '"';
        s += 2;
      } else if (c == '"') {
        quoted = 0;
        s++;
      } else {
        *w++ = c;
        s++;
      }
      continue;
    }
    if (c == '"') {
      quoted = 1;
      s++;
    } else if (c == ',') {
      *w++ = 0;
      s++;
      if (n < max) fields[n++] = w;
    } else if (c == '\n') {
      s++;
      break;
    } else {
      *w++ = c;
      s++;
    }
  }
  *w = 0;
  *p = s;
  return n;
}

/* "H:MM:SS.ffffff" (hours any width, maybe negative) in microseconds. */
static int64_t time_micros(const char *t) {
  int neg = *t == '-';
  if (neg) t++;
  long h = 0, m = 0, s = 0, us = 0;
  char frac[8] = "000000";
  if (sscanf(t, "%ld:%ld:%ld.%6[0-9]", &h, &m, &s, frac) < 3) return INT64_MIN;
  for (size_t i = strlen(frac); i < 6; i++) frac[i] = '0';
  frac[6] = 0;
  us = atol(frac);
  int64_t v = ((int64_t)h * 3600 + m * 60 + s) * 1000000 + us;
  return neg ? -v : v;
}

/* A value of fixed width from buffer 1 of a child array, at row `i` (offset applied). */
#define VALUE(arr, type, i) (((const type *)(arr)->buffers[1])[(arr)->offset + (i)])

/* Checks the stream's schema: a struct of the 8 columns of `pairs` with Arrow's format codes. */
static void check_pairs_schema(struct ArrowArrayStream *s) {
  struct ArrowSchema schema;
  CHECK(s->get_schema(s, &schema) == 0);
  CHECK(strcmp(schema.format, "+s") == 0 && schema.n_children == 8);
  const char *names[8] = {"a", "b", "v", "f", "t", "y", "s", "bits"};
  /* int32, utf8, int64, float32, duration[us], uint16, utf8, uint64 */
  const char *formats[8] = {"i", "u", "l", "f", "tDu", "S", "u", "L"};
  for (int c = 0; c < 8; c++) {
    CHECK(strcmp(schema.children[c]->name, names[c]) == 0);
    CHECK(strcmp(schema.children[c]->format, formats[c]) == 0);
    CHECK((schema.children[c]->flags & ARROW_FLAG_NULLABLE) == 0); /* all NOT NULL */
  }
  schema.release(&schema);
  CHECK(schema.release == NULL);
}

/* Streams `pairs` and checks every cell against Dolt's CSV from record `first` on; returns the
 * rows read. */
static int64_t check_pairs(struct ArrowArrayStream *s, char *csv, int64_t first, int64_t batch) {
  char *p = csv;
  char *f[16];
  csv_record(&p, f, 16); /* header */
  for (int64_t k = 0; k < first; k++) csv_record(&p, f, 16);
  int64_t rows = 0;
  struct ArrowArray arr;
  while (next_array(s, &arr)) {
    CHECK(arr.length >= 1 && arr.length <= batch && arr.n_children == 8 && arr.null_count == 0);
    struct ArrowArray **col = arr.children;
    for (int64_t i = 0; i < arr.length; i++) {
      CHECK(*p != 0);
      int n = csv_record(&p, f, 16);
      CHECK(n == 8);
      for (int c = 0; c < 8; c++) CHECK(is_valid(col[c], i));
      CHECK(VALUE(col[0], int32_t, i) == atoi(f[0]));
      int32_t len;
      const char *b = bytes_at(col[1], i, &len);
      CHECK((size_t)len == strlen(f[1]) && memcmp(b, f[1], (size_t)len) == 0);
      CHECK(VALUE(col[2], int64_t, i) == strtoll(f[2], NULL, 10));
      CHECK(VALUE(col[3], float, i) == strtof(f[3], NULL));
      CHECK(VALUE(col[4], int64_t, i) == time_micros(f[4]));
      CHECK(VALUE(col[5], uint16_t, i) == (uint16_t)atoi(f[5]));
      const char *set = bytes_at(col[6], i, &len);
      CHECK((size_t)len == strlen(f[6]) && memcmp(set, f[6], (size_t)len) == 0);
      CHECK(VALUE(col[7], uint64_t, i) == strtoull(f[7], NULL, 10));
      rows++;
    }
    arr.release(&arr);
    CHECK(arr.release == NULL);
  }
  return rows;
}

int main(int argc, char **argv) {
  (void)make_temp_dir; /* common.h helpers this test has no use for */
  (void)rm_rf;
  const char *vectors = argc > 1 ? argv[1] : getenv("PROLLY_VECTORS");
  if (vectors && *vectors) {
    snprintf(g_db, sizeof g_db, "%s/dolt-db/vecdb", vectors);
    snprintf(g_csv, sizeof g_csv, "%s/dolt-db/vecdb.expected/main/pairs.csv", vectors);
  }
  char probe[1100];
  snprintf(probe, sizeof probe, "%s/.dolt", g_db);
  if (!vectors || !*vectors || access(probe, R_OK) != 0) {
    const char *allow = getenv("PROLLY_ALLOW_MISSING_VECTORS");
    if (allow && strcmp(allow, "1") == 0) {
      printf("SKIPPED: vectors not found\n");
      return 0;
    }
    fprintf(stderr, "test_arrow: vectors not found (pass the vectors directory as argv[1] or set "
                    "PROLLY_VECTORS; PROLLY_ALLOW_MISSING_VECTORS=1 skips)\n");
    return 1;
  }
  size_t csv_len;
  char *csv = read_file(g_csv, &csv_len);
  size_t records = 0;
  for (size_t i = 0; i < csv_len; i++) records += csv[i] == '\n';
  (void)records;

  prolly_dolt *db = NULL;
  OK(prolly_dolt_open(g_db, &db));
  prolly_dolt_root *root = NULL;
  OK(prolly_dolt_root_open(db, "main", PROLLY_DOLT_STATE_WORKING, &root));
  prolly_dolt_table *table = NULL;
  OK(prolly_dolt_table_open(root, "pairs", &table));

  /* The whole table; the stream outlives the handles it was made from. */
  struct ArrowArrayStream s;
  OK(prolly_dolt_table_arrow(table, 100, &s));
  prolly_dolt_table_free(table);
  prolly_dolt_root_free(root);
  check_pairs_schema(&s);
  char *copy = malloc(csv_len + 1);
  memcpy(copy, csv, csv_len + 1);
  int64_t total = check_pairs(&s, copy, 0, 100);
  CHECK(total > 1000);
  s.release(&s);
  CHECK(s.release == NULL);

  /* A key range: rows with a >= (the 11th row's a) in key order, at most 25 of them. */
  OK(prolly_dolt_root_open(db, "main", PROLLY_DOLT_STATE_WORKING, &root));
  OK(prolly_dolt_table_open(root, "pairs", &table));
  memcpy(copy, csv, csv_len + 1);
  char *p = copy, *f[16];
  for (int k = 0; k < 11; k++) csv_record(&p, f, 16); /* header + 10 rows */
  csv_record(&p, f, 16);
  /* The 11th row's key (a, b): a prefix bound on a alone starts at the first row with that a. */
  int64_t first = 10;
  int a11 = atoi(f[0]);
  memcpy(copy, csv, csv_len + 1);
  p = copy;
  csv_record(&p, f, 16);
  for (int64_t k = 0; k < 10; k++) {
    csv_record(&p, f, 16);
    if (atoi(f[0]) == a11 && first == 10) first = k;
  }
  prolly_dolt_value key = {0};
  key.kind = PROLLY_DOLT_KIND_INT;
  key.int_value = a11;
  prolly_dolt_bound lower = {PROLLY_BOUND_KIND_INCLUDED, &key, 1};
  prolly_dolt_bound upper = {PROLLY_BOUND_KIND_UNBOUNDED, NULL, 0};
  OK(prolly_dolt_range_arrow(table, NULL, &lower, &upper, PROLLY_DIRECTION_FORWARD, 25, 7, &s));
  memcpy(copy, csv, csv_len + 1);
  CHECK(check_pairs(&s, copy, first, 7) == 25);
  s.release(&s);

  /* An index range over uniq_v (all of it): every row, in v order. */
  OK(prolly_dolt_range_arrow(table, "uniq_v", &upper, &upper, PROLLY_DIRECTION_FORWARD, 0, 0,
                             &s));
  struct ArrowArray arr;
  int64_t rows = 0, prev = INT64_MIN;
  for (;;) {
    CHECK(s.get_next(&s, &arr) == 0);
    if (!arr.release) break;
    for (int64_t i = 0; i < arr.length; i++) {
      int64_t v = VALUE(arr.children[2], int64_t, i);
      CHECK(v > prev);
      prev = v;
    }
    rows += arr.length;
    arr.release(&arr);
  }
  CHECK(rows == total);
  s.release(&s);
  EXPECT(prolly_dolt_range_arrow(table, "nope", &upper, &upper, 0, 0, 0, &s),
         PROLLY_RESULT_NOT_FOUND);
  EXPECT(prolly_dolt_table_arrow(NULL, 0, &s), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  EXPECT(prolly_dolt_table_arrow(table, 0, NULL), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  prolly_dolt_table_free(table);
  prolly_dolt_root_free(root);

  /* The table cut into 3 parts (main's commit, which its working set equals), each read on its
   * own from its JSON: one after another they are the whole table, cell for cell, and their
   * sizes differ by at most one row. A part of two columns reads those, in the order asked. */
  prolly_dolt_parts *parts = NULL;
  OK(prolly_dolt_split(db, "main", "pairs", 3, NULL, &parts));
  size_t nparts = 0;
  OK(prolly_dolt_parts_count(parts, &nparts));
  CHECK(nparts == 3);
  int64_t from = 0;
  const char *json = NULL;
  for (size_t i = 0; i < nparts; i++) {
    OK(prolly_dolt_parts_get(parts, i, &json));
    OK(prolly_dolt_part_arrow(json, 50, &s));
    check_pairs_schema(&s);
    memcpy(copy, csv, csv_len + 1);
    int64_t got = check_pairs(&s, copy, from, 50);
    CHECK(got >= total / 3 && got <= total / 3 + 1);
    from += got;
    s.release(&s);
  }
  CHECK(from == total);
  EXPECT(prolly_dolt_parts_get(parts, 3, &json), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  prolly_dolt_parts_free(parts);
  OK(prolly_dolt_split(db, "main", "pairs", 2, "v, a", &parts));
  OK(prolly_dolt_parts_get(parts, 1, &json));
  OK(prolly_dolt_part_arrow(json, 0, &s));
  struct ArrowSchema two;
  CHECK(s.get_schema(&s, &two) == 0);
  CHECK(two.n_children == 2 && strcmp(two.children[0]->name, "v") == 0 &&
        strcmp(two.children[1]->name, "a") == 0);
  two.release(&two);
  s.release(&s);
  prolly_dolt_parts_free(parts);
  EXPECT(prolly_dolt_part_arrow("{\"format\": 1}", 0, &s), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  EXPECT(prolly_dolt_split(db, "main", "nope", 2, NULL, &parts), PROLLY_RESULT_NOT_FOUND);
  EXPECT(prolly_dolt_split(db, "main", "pairs", 2, "a,nope", &parts), PROLLY_RESULT_NOT_FOUND);
  EXPECT(prolly_dolt_split(NULL, "main", "pairs", 2, NULL, &parts),
         PROLLY_RESULT_ERR_NULL_ARGUMENT);
  prolly_dolt_free(db);

  /* A diff (crates/dolt/tests/data/dolt_diff): HEAD~2 -> HEAD~1 on t modifies id 2, removes
   * id 3, adds id 4; columns to_id, to_name, to_v, to_commit, to_commit_date, from_id, …,
   * diff_type. */
  OK(prolly_dolt_open("crates/dolt/tests/data/dolt_diff/db", &db));
  OK(prolly_dolt_diff_arrow(db, "HEAD~2", "HEAD~1", "t", 2, &s));
  prolly_dolt_free(db);
  struct ArrowSchema schema;
  CHECK(s.get_schema(&s, &schema) == 0);
  CHECK(schema.n_children == 11);
  CHECK(strcmp(schema.children[0]->name, "to_id") == 0);
  CHECK(strcmp(schema.children[3]->name, "to_commit") == 0);
  CHECK(strcmp(schema.children[4]->format, "tsu:") == 0);
  CHECK(strcmp(schema.children[5]->name, "from_id") == 0);
  CHECK(strcmp(schema.children[10]->name, "diff_type") == 0);
  schema.release(&schema);
  const char *kinds[3] = {"modified", "removed", "added"};
  int32_t ids[3] = {2, 3, 4};
  int64_t n = 0;
  for (;;) {
    CHECK(s.get_next(&s, &arr) == 0);
    if (!arr.release) break;
    CHECK(arr.length <= 2);
    for (int64_t i = 0; i < arr.length; i++, n++) {
      int32_t len;
      const char *kind = bytes_at(arr.children[10], i, &len);
      CHECK(n < 3 && (size_t)len == strlen(kinds[n]) && memcmp(kind, kinds[n], (size_t)len) == 0);
      const struct ArrowArray *id = arr.children[n == 1 ? 5 : 0];
      CHECK(is_valid(id, i) && VALUE(id, int32_t, i) == ids[n]);
      CHECK(n != 1 || !is_valid(arr.children[0], i)); /* removed: no to_ side */
      CHECK(n != 2 || !is_valid(arr.children[5], i)); /* added: no from_ side */
    }
    arr.release(&arr);
  }
  CHECK(n == 3);
  s.release(&s);

  free(copy);
  free(csv);
  printf("test_arrow: %d checks passed\n", g_checks);
  return 0;
}
