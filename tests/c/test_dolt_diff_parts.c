/* A table's diff cut into parts from C, consumed with plain C (no Arrow library): over the
 * Dolt-made database crates/dolt/tests/data/diff_parts, every diff its expected.txt lists
 * (FROM TO TABLE, with the line count of what Dolt's dolt_diff printed as CSV) is read whole
 * (prolly_dolt_diff_arrow) and cut into 1, 2, 3 and 8 parts (prolly_dolt_split_diff), each
 * part's JSON read on its own (prolly_dolt_diff_part_arrow). The parts, one after the other,
 * give as many rows as the whole diff and as Dolt (its CSV's lines: a header, a line a row, one
 * more for each line break inside a cell), as many of each diff_type, and the same keys in the
 * same order (a running hash of each row's diff_type and key cells); every part's schema is the
 * whole diff's. Bad input returns its code and writes nothing. Every schema, array, stream and
 * part list is released (valgrind and LeakSanitizer check it).
 *
 *   test_dolt_diff_parts [DB_DIR]   default: crates/dolt/tests/data/diff_parts/db (run from the
 *                                   repository root, as scripts/c-tests.sh does); its
 *                                   ../expected.txt holds Dolt's answers. */
#include "common.h"

#include <stdint.h>

/* What a diff stream held: rows, rows of each diff_type, and a hash of the rows in order. */
typedef struct {
  int64_t rows, added, removed, modified;
  uint64_t hash;
  int64_t breaks; /* line breaks inside utf8 and binary cells */
} tally;

static uint64_t fnv(uint64_t h, const void *data, size_t len) {
  const unsigned char *p = data;
  for (size_t i = 0; i < len; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

/* Adds a variable-width cell (NULL told apart from empty) to the hash. */
static uint64_t hash_cell(uint64_t h, const struct ArrowArray *a, int64_t i) {
  if (!is_valid(a, i)) return fnv(h, "N", 1);
  int32_t len;
  const char *b = bytes_at(a, i, &len);
  h = fnv(h, &len, sizeof len);
  return fnv(h, b, (size_t)len);
}

/* The children of a diff stream's schema: to_<key> first, from_<key> and diff_type found by
 * name; checks the formats this database's keys have (utf8 or binary). */
typedef struct {
  int64_t n_children, from_key, diff_type;
} layout;

static layout schema_layout(struct ArrowArrayStream *s, struct ArrowSchema *schema) {
  CHECK(s->get_schema(s, schema) == 0);
  CHECK(strcmp(schema->format, "+s") == 0);
  layout l = {schema->n_children, -1, -1};
  for (int64_t c = 0; c < schema->n_children; c++) {
    const char *name = schema->children[c]->name;
    if (l.from_key < 0 && strncmp(name, "from_", 5) == 0) l.from_key = c;
    if (strcmp(name, "diff_type") == 0) l.diff_type = c;
  }
  CHECK(strncmp(schema->children[0]->name, "to_", 3) == 0);
  CHECK(l.from_key > 0 && l.diff_type == l.n_children - 1);
  const char *key_format = schema->children[0]->format;
  CHECK(strcmp(key_format, "u") == 0 || strcmp(key_format, "z") == 0);
  CHECK(strcmp(schema->children[l.from_key]->format, key_format) == 0);
  CHECK(strcmp(schema->children[l.diff_type]->format, "u") == 0);
  return l;
}

/* Whether two schemas have the same children: names, formats and nullability. */
static int same_schema(const struct ArrowSchema *a, const struct ArrowSchema *b) {
  if (a->n_children != b->n_children) return 0;
  for (int64_t c = 0; c < a->n_children; c++) {
    const struct ArrowSchema *x = a->children[c], *y = b->children[c];
    if (strcmp(x->name, y->name) || strcmp(x->format, y->format) || x->flags != y->flags) return 0;
  }
  return 1;
}

/* Reads a diff stream to its end into `t` (rows added to what it holds), checking that its
 * schema equals `want` (when given; else it is written there), then releases the stream. */
static void read_diff(struct ArrowArrayStream *s, int64_t batch_rows, struct ArrowSchema *want,
                      tally *t) {
  struct ArrowSchema schema;
  layout l = schema_layout(s, &schema);
  if (want->release) {
    CHECK(same_schema(&schema, want));
    schema.release(&schema);
    CHECK(schema.release == NULL);
  } else {
    *want = schema;
  }
  struct ArrowArray arr;
  while (next_array(s, &arr)) {
    CHECK(arr.length >= 1 && arr.length <= batch_rows && arr.n_children == l.n_children);
    const struct ArrowArray *kind = arr.children[l.diff_type];
    for (int64_t c = 0; c < l.n_children; c++) {
      const char *format = want->children[c]->format;
      if (strcmp(format, "u") != 0 && strcmp(format, "z") != 0) continue;
      for (int64_t i = 0; i < arr.length; i++) {
        if (!is_valid(arr.children[c], i)) continue;
        int32_t len;
        const char *b = bytes_at(arr.children[c], i, &len);
        for (int32_t k = 0; k < len; k++) t->breaks += b[k] == '\n';
      }
    }
    for (int64_t i = 0; i < arr.length; i++) {
      int32_t len;
      const char *k = bytes_at(kind, i, &len);
      if (len == 5 && memcmp(k, "added", 5) == 0) {
        t->added++;
        CHECK(!is_valid(arr.children[l.from_key], i) && is_valid(arr.children[0], i));
      } else if (len == 7 && memcmp(k, "removed", 7) == 0) {
        t->removed++;
        CHECK(is_valid(arr.children[l.from_key], i) && !is_valid(arr.children[0], i));
      } else {
        CHECK(len == 8 && memcmp(k, "modified", 8) == 0);
        t->modified++;
      }
      t->hash = fnv(t->hash, k, (size_t)len);
      t->hash = hash_cell(t->hash, arr.children[0], i);
      t->hash = hash_cell(t->hash, arr.children[l.from_key], i);
      t->rows++;
    }
    arr.release(&arr);
    CHECK(arr.release == NULL);
  }
  s->release(s);
  CHECK(s->release == NULL);
}

static int same_tally(const tally *a, const tally *b) {
  return a->rows == b->rows && a->added == b->added && a->removed == b->removed &&
         a->modified == b->modified && a->hash == b->hash && a->breaks == b->breaks;
}

/* The library's message for the last failure contains `want`. */
static void expect_message(const char *want) {
  char msg[1024];
  prolly_last_error_message(msg, sizeof msg);
  if (!strstr(msg, want)) {
    fprintf(stderr, "last error %s lacks %s\n", msg, want);
    exit(1);
  }
}

int main(int argc, char **argv) {
  (void)make_temp_dir; /* common.h helpers this test has no use for */
  (void)rm_rf;
  const char *dir = argc > 1 ? argv[1] : "crates/dolt/tests/data/diff_parts/db";
  char expected_path[1100];
  snprintf(expected_path, sizeof expected_path, "%s/../expected.txt", dir);
  FILE *expected = fopen(expected_path, "r");
  if (!expected) {
    perror(expected_path);
    return 1;
  }
  prolly_dolt *db = NULL;
  OK(prolly_dolt_open(dir, &db));

  const uint64_t counts[4] = {1, 2, 3, 8};
  char from[64], to[64], table[64], sha[80];
  long lines;
  int diffs = 0, multi = 0;
  while (fscanf(expected, "%63s %63s %63s %ld %79s", from, to, table, &lines, sha) == 5) {
    diffs++;
    /* The whole diff. */
    struct ArrowArrayStream s;
    struct ArrowSchema whole_schema = {0};
    tally whole = {0, 0, 0, 0, 14695981039346656037ull, 0};
    OK(prolly_dolt_diff_arrow(db, from, to, table, 0, &s));
    read_diff(&s, 65536, &whole_schema, &whole);
    /* Dolt's CSV: a header, a line a row, and a line more for each line break inside a cell
     * (the VARBINARY keys' bytes hold some). */
    CHECK(1 + whole.rows + whole.breaks == lines);

    for (int c = 0; c < 4; c++) {
      prolly_dolt_parts *parts = NULL;
      OK(prolly_dolt_split_diff(db, from, to, table, counts[c], &parts));
      size_t n = 0;
      OK(prolly_dolt_parts_count(parts, &n));
      CHECK(n >= 1 && n <= counts[c]);
      if (n > 1) multi++;
      tally got = {0, 0, 0, 0, 14695981039346656037ull, 0};
      for (size_t i = 0; i < n; i++) {
        const char *json = NULL;
        OK(prolly_dolt_parts_get(parts, i, &json));
        CHECK(strstr(json, "\"format\":\"prollystore.dolt.diff-part/1\"") != NULL);
        OK(prolly_dolt_diff_part_arrow(json, 64, &s));
        read_diff(&s, 64, &whole_schema, &got);
      }
      const char *json = NULL;
      EXPECT(prolly_dolt_parts_get(parts, n, &json), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
      prolly_dolt_parts_free(parts);
      if (!same_tally(&got, &whole)) {
        fprintf(stderr, "%s..%s %s in %zu parts: %lld rows (%lld/%lld/%lld), whole %lld\n", from, to,
                table, n, (long long)got.rows, (long long)got.added, (long long)got.removed,
                (long long)got.modified, (long long)whole.rows);
        return 1;
      }
    }
    printf("%s..%s %s: %lld rows (%lld added, %lld removed, %lld modified), in 1, 2, 3 and 8 "
           "parts alike\n",
           from, to, table, (long long)whole.rows, (long long)whole.added, (long long)whole.removed,
           (long long)whole.modified);
    whole_schema.release(&whole_schema);
  }
  fclose(expected);
  CHECK(diffs == 9 && multi > 20);

  /* Bad input: its code, a message saying what, nothing written. */
  prolly_dolt_parts *parts = NULL;
  EXPECT(prolly_dolt_split_diff(db, "nope", "main", "cs", 2, &parts), PROLLY_RESULT_NOT_FOUND);
  EXPECT(prolly_dolt_split_diff(db, "main~1", "main", "nope", 2, &parts), PROLLY_RESULT_NOT_FOUND);
  expect_message("\"nope\"");
  EXPECT(prolly_dolt_split_diff(db, "main~1", "main", "cs", 0, &parts),
         PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  EXPECT(prolly_dolt_split_diff(NULL, "main~1", "main", "cs", 2, &parts),
         PROLLY_RESULT_ERR_NULL_ARGUMENT);
  EXPECT(prolly_dolt_split_diff(db, "main~1", NULL, "cs", 2, &parts),
         PROLLY_RESULT_ERR_NULL_ARGUMENT);
  EXPECT(prolly_dolt_split_diff(db, "main~1", "main", "cs", 2, NULL),
         PROLLY_RESULT_ERR_NULL_ARGUMENT);
  CHECK(parts == NULL);
  struct ArrowArrayStream s;
  memset(&s, 0, sizeof s);
  EXPECT(prolly_dolt_diff_part_arrow("{not json", 0, &s), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  expect_message("does not parse as a diff part");
  EXPECT(prolly_dolt_diff_part_arrow(NULL, 0, &s), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  /* A table part to the diff reader, a diff part to the table reader. */
  const char *json = NULL;
  OK(prolly_dolt_split(db, "main", "cs", 2, NULL, &parts));
  OK(prolly_dolt_parts_get(parts, 0, &json));
  EXPECT(prolly_dolt_diff_part_arrow(json, 0, &s), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  expect_message("this reader reads \"prollystore.dolt.diff-part/1\"");
  prolly_dolt_parts_free(parts);
  OK(prolly_dolt_split_diff(db, "main~1", "main", "cs", 2, &parts));
  OK(prolly_dolt_parts_get(parts, 0, &json));
  EXPECT(prolly_dolt_part_arrow(json, 0, &s), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  expect_message("this reader reads \"prollystore.dolt.part/1\"");
  EXPECT(prolly_dolt_diff_part_arrow(json, 0, NULL), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  prolly_dolt_parts_free(parts);
  CHECK(s.release == NULL);
  prolly_dolt_free(db);
  printf("test_dolt_diff_parts: %d checks passed\n", g_checks);
  return 0;
}
