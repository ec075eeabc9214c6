/* Reads a real Dolt database through the C ABI and checks it against what the dolt CLI printed
 * (shared/vectors/dolt-db/vecdb and vecdb.expected): branches, the log, table names, schemas,
 * typed rows (re-quoted into CSV and compared byte for byte), row counts, and CSV export to a
 * file and through a callback.
 *
 *   test_dolt [VECTORS_DIR [NULL_KEYS_DIR]]     default: $PROLLY_VECTORS, $PROLLY_NULL_KEYS_DATA
 *
 * NULL_KEYS_DIR (crates/dolt/tests/data/null_keys) adds range scans with NULL bounds.
 *
 * Without vectors it fails, unless PROLLY_ALLOW_MISSING_VECTORS=1 (then it prints SKIPPED). */
#include "common.h"

#include <ctype.h>
#include <stdint.h>

static char g_db[1024];       /* .../dolt-db/vecdb */
static char g_expected[1024]; /* .../dolt-db/vecdb.expected */

/* A growable byte buffer. */
typedef struct {
  uint8_t *data;
  size_t len, cap;
} buf_t;

static void buf_put(buf_t *b, const void *p, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n + 1) cap *= 2;
    b->data = realloc(b->data, cap);
    if (!b->data) exit(1);
    b->cap = cap;
  }
  if (n) memcpy(b->data + b->len, p, n);
  b->len += n;
  b->data[b->len] = 0;
}

/* Reads a whole file (NUL-terminated); exits if it cannot. */
static buf_t read_file(const char *path) {
  buf_t b = {0};
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(1);
  }
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) buf_put(&b, chunk, n);
  fclose(f);
  buf_put(&b, "", 0);
  return b;
}

static buf_t expected(const char *rel) {
  char path[2048];
  snprintf(path, sizeof path, "%s/%s", g_expected, rel);
  return read_file(path);
}

static void check_same(const char *what, const buf_t *got, const buf_t *want) {
  g_checks++;
  if (got->len == want->len && memcmp(got->data, want->data, got->len) == 0) return;
  size_t i = 0;
  while (i < got->len && i < want->len && got->data[i] == want->data[i]) i++;
  fprintf(stderr, "%s: differs at byte %zu (got %zu bytes, want %zu)\n", what, i, got->len,
          want->len);
  exit(1);
}

/* Number of CSV records after the header (newlines outside quotes, minus one). */
static size_t csv_records(const buf_t *b) {
  size_t lines = 0;
  int quoted = 0;
  for (size_t i = 0; i < b->len; i++) {
    if (b->data[i] == '"') quoted = !quoted;
    else if (b->data[i] == '\n' && !quoted) lines++;
  }
  return lines ? lines - 1 : 0;
}

/* Appends one field as Dolt's CSV writer does: empty text and text with a comma, quote, CR/LF,
 * a leading space (ASCII or U+00A0/U+0085) or equal to "\." is quoted. */
static void csv_field(buf_t *out, const uint8_t *p, size_t n) {
  int quote = n == 0 || (n == 2 && p[0] == '\\' && p[1] == '.');
  if (n > 0 && (isspace(p[0]) || (n > 1 && p[0] == 0xC2 && (p[1] == 0xA0 || p[1] == 0x85))))
    quote = 1;
  for (size_t i = 0; i < n && !quote; i++)
    if (p[i] == ',' || p[i] == '"' || p[i] == '\r' || p[i] == '\n') quote = 1;
  if (!quote) {
    buf_put(out, p, n);
    return;
  }
  buf_put(out, "\"", 1);
  for (size_t i = 0; i < n; i++) {
    if (p[i] == '"') buf_put(out, "\"\"", 2);
    else buf_put(out, p + i, 1);
  }
  buf_put(out, "\"", 1);
}

static void test_errors(prolly_dolt *db) {
  prolly_dolt *none = NULL;
  EXPECT(prolly_dolt_open(NULL, &none), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  EXPECT(prolly_dolt_open(g_db, NULL), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  CHECK(prolly_dolt_open("/nonexistent/dolt-db", &none) != PROLLY_RESULT_OK);
  CHECK(none == NULL);
  char msg[512];
  CHECK(prolly_last_error_message(msg, sizeof msg) > 0);
  prolly_dolt_log_iter *lg = NULL;
  EXPECT(prolly_dolt_log(db, "no-such-branch", &lg), PROLLY_RESULT_NOT_FOUND);
  CHECK(lg == NULL);
  prolly_last_error_message(msg, sizeof msg);
  CHECK(strstr(msg, "no-such-branch") != NULL);
  prolly_dolt_root *root = NULL;
  EXPECT(prolly_dolt_root_open(db, "main", 7, &root), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  EXPECT(prolly_dolt_root_open(db, "nope", PROLLY_DOLT_STATE_WORKING, &root), PROLLY_RESULT_NOT_FOUND);
  OK(prolly_dolt_root_open(db, "main", PROLLY_DOLT_STATE_WORKING, &root));
  const char *name = NULL;
  EXPECT(prolly_dolt_root_table_name(root, 99, &name), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  prolly_dolt_table *t = NULL;
  EXPECT(prolly_dolt_table_open(root, "no_table", &t), PROLLY_RESULT_NOT_FOUND);
  CHECK(t == NULL);
  OK(prolly_dolt_table_open(root, "pairs", &t));
  prolly_dolt_column col;
  EXPECT(prolly_dolt_table_column(t, 1000, &col), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  prolly_dolt_rows *rows = NULL;
  OK(prolly_dolt_rows_open(t, &rows));
  prolly_dolt_value one[1];
  size_t need = 0;
  EXPECT(prolly_dolt_rows_next(rows, one, 1, &need), PROLLY_RESULT_ERR_BUFFER_TOO_SMALL);
  CHECK(need == 8);
  EXPECT(prolly_dolt_rows_next(rows, NULL, 0, &need), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  EXPECT(prolly_dolt_rows_next(NULL, one, 1, &need), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  prolly_dolt_rows_free(rows);
  prolly_dolt_table_free(t);
  prolly_dolt_root_free(root);
  /* Never writes into .dolt, even when asked to. */
  char inside[2048];
  snprintf(inside, sizeof inside, "%s/.dolt/out.csv", g_db);
  EXPECT(prolly_dolt_export_csv(db, "main", "pairs", inside), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  EXPECT(prolly_dolt_export_csv(db, "main", "no_table", "/tmp/never-created.csv"),
         PROLLY_RESULT_NOT_FOUND);
  EXPECT(prolly_dolt_export_csv_write(db, "main", "pairs", NULL, NULL),
         PROLLY_RESULT_ERR_NULL_ARGUMENT);
  /* NULL handles. */
  EXPECT(prolly_dolt_branches(NULL, NULL), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  EXPECT(prolly_dolt_log_next(NULL, NULL), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  CHECK(strcmp(prolly_result_message(PROLLY_RESULT_ERR_UNSUPPORTED),
               "the data uses an unsupported feature") == 0);
  CHECK(strcmp(prolly_result_message(PROLLY_RESULT_ERR_ENCODE),
               "a message could not be encoded") == 0);
  CHECK(PROLLY_RESULT_ERR_ENCODE == 45 && PROLLY_RESULT_ERR_ROOT_CONFLICT == 25);
  prolly_dolt_free(NULL);
  prolly_dolt_refs_free(NULL);
  prolly_dolt_log_free(NULL);
  prolly_dolt_root_free(NULL);
  prolly_dolt_table_free(NULL);
  prolly_dolt_rows_free(NULL);
}

static void test_branches(prolly_dolt *db) {
  prolly_dolt_refs *refs = NULL;
  OK(prolly_dolt_branches(db, &refs));
  size_t n = 0;
  OK(prolly_dolt_refs_count(refs, &n));
  /* branches.txt: "* main    d5tf... message" per branch, sorted by name. */
  buf_t want = expected("branches.txt");
  char *line = (char *)want.data;
  size_t i = 0;
  while (*line) {
    char *eol = strchr(line, '\n');
    if (eol) *eol = 0;
    char name[256], hash[64];
    CHECK(sscanf(line + 2, "%255s %63s", name, hash) == 2);
    CHECK(i < n);
    prolly_dolt_ref r;
    OK(prolly_dolt_refs_get(refs, i, &r));
    CHECK(strcmp(r.name, name) == 0);
    CHECK(strcmp(r.commit, hash) == 0);
    CHECK(strcmp(r.message, "") == 0);
    char text[33];
    OK(prolly_address_to_string(&r.commit_address, text, sizeof text));
    CHECK(strcmp(text, hash) == 0);
    i++;
    if (!eol) break;
    line = eol + 1;
  }
  CHECK(i == n && n == 2);
  prolly_dolt_ref r;
  EXPECT(prolly_dolt_refs_get(refs, n, &r), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  prolly_dolt_refs_free(refs);
  free(want.data);

  OK(prolly_dolt_tags(db, &refs));
  OK(prolly_dolt_refs_count(refs, &n));
  CHECK(n == 0); /* vecdb has no tags (no tags.txt) */
  prolly_dolt_refs_free(refs);
}

static void test_log(prolly_dolt *db) {
  buf_t want = expected("main/log_oneline.txt");
  buf_t got = {0};
  prolly_dolt_log_iter *lg = NULL;
  OK(prolly_dolt_log(db, "main", &lg));
  prolly_dolt_commit c;
  size_t count = 0;
  while (prolly_dolt_log_next(lg, &c) == PROLLY_RESULT_OK) {
    if (count == 0) {
      /* The first line of log_oneline.txt is the head: the merge commit. */
      char first[512];
      snprintf(first, sizeof first, "%s %s\n", c.hash, c.message);
      CHECK(strncmp((const char *)want.data, first, strlen(first)) == 0);
      CHECK(c.parent_count == 2 && c.parents != NULL);
      CHECK(c.date_millis > 1600000000000LL);
      CHECK(strlen(c.author) > 0 && strchr(c.email, '@') != NULL);
    }
    CHECK(strlen(c.message) == c.message_len);
    buf_put(&got, c.hash, strlen(c.hash));
    buf_put(&got, " ", 1);
    buf_put(&got, c.message, c.message_len);
    buf_put(&got, "\n", 1);
    count++;
  }
  CHECK(count == 5);
  CHECK(c.parent_count == 0 && c.parents == NULL && c.height == 1); /* the first commit */
  EXPECT(prolly_dolt_log_next(lg, &c), PROLLY_RESULT_END);
  check_same("main log --oneline", &got, &want);
  prolly_dolt_log_free(lg);
  free(want.data);
  free(got.data);

  /* A commit hash works as a start too. */
  OK(prolly_dolt_log(db, "u9qgeuinoa9pddth3gttlqfj61ftqfit", &lg));
  OK(prolly_dolt_log_next(lg, &c));
  CHECK(strcmp(c.message, "edits on feature") == 0);
  prolly_dolt_log_free(lg);
}

/* Checks the schema of `items` against items.schema.txt and the CSV header. */
static void test_schema(prolly_dolt_root *root) {
  prolly_dolt_table *t = NULL;
  OK(prolly_dolt_table_open(root, "items", &t));
  size_t n = 0;
  OK(prolly_dolt_table_column_count(t, &n));
  CHECK(n == 11);
  bool keyless = true;
  OK(prolly_dolt_table_keyless(t, &keyless));
  CHECK(!keyless);
  buf_t schema = expected("main/items.schema.txt");
  for (size_t i = 0; i < n; i++) {
    prolly_dolt_column c;
    OK(prolly_dolt_table_column(t, i, &c));
    /* The CREATE TABLE line of this column: "  `name` type..." */
    char pat[300];
    snprintf(pat, sizeof pat, "  `%s` ", c.name);
    const char *line = strstr((const char *)schema.data, pat);
    CHECK(line != NULL);
    line += strlen(pat);
    CHECK(strncmp(line, c.sql_type, strlen(c.sql_type)) == 0);
    const char *eol = strchr(line, '\n');
    int not_null = strstr(line, "NOT NULL") != NULL && strstr(line, "NOT NULL") < eol;
    CHECK(c.nullable == !not_null);
    CHECK(c.primary_key_position == (strcmp(c.name, "id") == 0 ? 0 : -1));
  }
  prolly_dolt_column c;
  OK(prolly_dolt_table_column(t, 4, &c));
  CHECK(strcmp(c.name, "price") == 0 && strcmp(c.sql_type, "decimal(12,4)") == 0);
  free(schema.data);
  prolly_dolt_table_free(t);

  /* pairs has a two-column primary key (a, b). */
  OK(prolly_dolt_table_open(root, "pairs", &t));
  OK(prolly_dolt_table_column(t, 0, &c));
  CHECK(strcmp(c.name, "a") == 0 && c.primary_key_position == 0);
  OK(prolly_dolt_table_column(t, 1, &c));
  CHECK(strcmp(c.name, "b") == 0 && c.primary_key_position == 1);
  prolly_dolt_table_free(t);
}

/* Typed values of the first row of items (see main/items.csv). */
static void test_typed_values(prolly_dolt_root *root) {
  prolly_dolt_table *t = NULL;
  OK(prolly_dolt_table_open(root, "items", &t));
  prolly_dolt_rows *rows = NULL;
  OK(prolly_dolt_rows_open(t, &rows));
  prolly_dolt_table_free(t); /* the cursor keeps what it needs */
  prolly_dolt_value v[16];
  size_t n = 0;
  OK(prolly_dolt_rows_next(rows, v, 16, &n));
  CHECK(n == 11);
  CHECK(v[0].kind == PROLLY_DOLT_KIND_INT && v[0].int_value == 1);
  CHECK(v[1].kind == PROLLY_DOLT_KIND_UINT && v[1].uint_value == 18392018536807901606ULL);
  CHECK(v[2].kind == PROLLY_DOLT_KIND_TEXT && strcmp((const char *)v[2].text, "épsilon-kappa-832") == 0);
  CHECK(v[4].kind == PROLLY_DOLT_KIND_DECIMAL && strcmp((const char *)v[4].text, "-603398.8078") == 0);
  CHECK(v[5].kind == PROLLY_DOLT_KIND_DOUBLE && v[5].double_value == -6916.15625);
  CHECK(v[6].kind == PROLLY_DOLT_KIND_DATETIME && v[6].fsp == 6);
  CHECK(strcmp((const char *)v[6].text, "2027-08-18 16:38:25.918568") == 0);
  CHECK(v[6].int_value == 1818607105918568LL);
  CHECK(v[7].kind == PROLLY_DOLT_KIND_DATE && v[7].int_value == 28490728);
  CHECK(v[8].kind == PROLLY_DOLT_KIND_JSON && strcmp((const char *)v[8].text, "{\"edited\":true}") == 0);
  CHECK(v[9].kind == PROLLY_DOLT_KIND_BYTES && v[9].text_len > 0);
  CHECK(v[10].kind == PROLLY_DOLT_KIND_ENUM && v[10].uint_value == 3);
  CHECK(strcmp((const char *)v[10].text, "blue") == 0);
  prolly_dolt_rows_free(rows);
}

/* A key value of kind INT or TEXT. */
static prolly_dolt_value int_key(int64_t x) {
  prolly_dolt_value v = {0};
  v.kind = PROLLY_DOLT_KIND_INT;
  v.int_value = x;
  return v;
}

static prolly_dolt_value text_key(const char *s) {
  prolly_dolt_value v = {0};
  v.kind = PROLLY_DOLT_KIND_TEXT;
  v.text = (const uint8_t *)s;
  v.text_len = strlen(s);
  return v;
}

/* Rows of a cursor (freed); the text of field 1 of the first and last rows into first/last. */
static size_t drain(prolly_dolt_rows *rows, char *first, char *last, size_t cap) {
  prolly_dolt_value v[16];
  size_t n = 0, count = 0;
  prolly_result r;
  while ((r = prolly_dolt_rows_next(rows, v, 16, &n)) == PROLLY_RESULT_OK) {
    if (count == 0 && first) snprintf(first, cap, "%s", (const char *)v[1].text);
    if (last) snprintf(last, cap, "%s", (const char *)v[1].text);
    count++;
  }
  CHECK(r == PROLLY_RESULT_END);
  prolly_dolt_rows_free(rows);
  return count;
}

/* Keyed reads of pairs (primary key a, b; unique index uniq_v on v) against main/pairs.csv:
 * a get by key, misses, a prefix range both ways, an index lookup, a limit. */
static void test_keyed(prolly_dolt_root *root) {
  buf_t csv = expected("main/pairs.csv");
  /* Rows with a = -140, in key order (the file starts with them). */
  size_t want = 0;
  char want_first[64] = {0}, want_last[64] = {0};
  const char *line = strchr((const char *)csv.data, '\n') + 1;
  while (strncmp(line, "-140,", 5) == 0) {
    const char *b = line + 5;
    const char *end = strchr(b, ',');
    if (want == 0) snprintf(want_first, sizeof want_first, "%.*s", (int)(end - b), b);
    snprintf(want_last, sizeof want_last, "%.*s", (int)(end - b), b);
    want++;
    line = strchr(line, '\n') + 1;
  }
  CHECK(want > 1);
  prolly_dolt_table *t = NULL;
  OK(prolly_dolt_table_open(root, "pairs", &t));

  prolly_dolt_value key[2] = {int_key(-140), text_key(want_first)};
  prolly_dolt_rows *rows = NULL;
  OK(prolly_dolt_rows_get(t, key, 2, &rows));
  prolly_dolt_value v[8];
  size_t n = 0;
  OK(prolly_dolt_rows_next(rows, v, 8, &n));
  CHECK(n == 8 && v[0].int_value == -140 && strcmp((const char *)v[1].text, want_first) == 0);
  /* The first line of the file is this row: "-140,b…,v,…". */
  int64_t v_of_first = v[2].int_value;
  EXPECT(prolly_dolt_rows_next(rows, v, 8, &n), PROLLY_RESULT_END);
  prolly_dolt_rows_free(rows);

  prolly_dolt_rows *none = NULL;
  prolly_dolt_value miss[2] = {int_key(-140), text_key("no such b")};
  EXPECT(prolly_dolt_rows_get(t, miss, 2, &none), PROLLY_RESULT_NOT_FOUND);
  CHECK(none == NULL);
  EXPECT(prolly_dolt_rows_get(t, key, 1, &none), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  prolly_dolt_value wrong = text_key("x");
  EXPECT(prolly_dolt_rows_get(t, &wrong, 1, &none), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  EXPECT(prolly_dolt_rows_get(t, NULL, 2, &none), PROLLY_RESULT_ERR_NULL_ARGUMENT);

  /* The prefix a = -140, forward and backward. */
  prolly_dolt_bound lo = {PROLLY_BOUND_KIND_INCLUDED, key, 1};
  prolly_dolt_bound hi = {PROLLY_BOUND_KIND_INCLUDED, key, 1};
  char first[64], last[64];
  OK(prolly_dolt_rows_range(t, NULL, &lo, &hi, PROLLY_DIRECTION_FORWARD, 0, &rows));
  CHECK(drain(rows, first, last, sizeof first) == want);
  CHECK(strcmp(first, want_first) == 0 && strcmp(last, want_last) == 0);
  OK(prolly_dolt_rows_range(t, NULL, &lo, &hi, PROLLY_DIRECTION_BACKWARD, 0, &rows));
  CHECK(drain(rows, first, last, sizeof first) == want);
  CHECK(strcmp(first, want_last) == 0 && strcmp(last, want_first) == 0);
  /* Exclusive of the first row, at most 1 row: the second row. */
  prolly_dolt_bound after = {PROLLY_BOUND_KIND_EXCLUDED, key, 2};
  prolly_dolt_bound open_end = {PROLLY_BOUND_KIND_UNBOUNDED, NULL, 0};
  OK(prolly_dolt_rows_range(t, NULL, &after, &open_end, PROLLY_DIRECTION_FORWARD, 1, &rows));
  CHECK(drain(rows, NULL, NULL, 0) == 1);

  /* Through the unique index on v: the row itself. */
  prolly_dolt_value vkey = int_key(v_of_first);
  prolly_dolt_bound at = {PROLLY_BOUND_KIND_INCLUDED, &vkey, 1};
  OK(prolly_dolt_rows_range(t, "uniq_v", &at, &at, PROLLY_DIRECTION_FORWARD, 0, &rows));
  CHECK(drain(rows, first, NULL, sizeof first) == 1 && strcmp(first, want_first) == 0);
  EXPECT(prolly_dolt_rows_range(t, "no_index", &at, &at, 0, 0, &rows), PROLLY_RESULT_NOT_FOUND);
  EXPECT(prolly_dolt_rows_range(t, NULL, &at, &at, 9, 0, &rows),
         PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  prolly_dolt_table_free(t);
  free(csv.data);
  g_checks++;
}

/* Every table of main: rows through the cursor, re-quoted as CSV, equal the expected file (key
 * order; keyless tables are compared by count, since Dolt's CSV sorts them); export to a file
 * and through a callback give the expected bytes exactly. */
static int collect(void *user, const uint8_t *data, size_t len) {
  buf_put((buf_t *)user, data, len);
  return 0;
}

static int refuse(void *user, const uint8_t *data, size_t len) {
  (void)user;
  (void)data;
  (void)len;
  return 1;
}

static void test_tables(prolly_dolt *db, prolly_dolt_root *root, const char *tmpdir) {
  buf_t hashes = expected("main/table_hashes.csv");
  size_t count = 0;
  OK(prolly_dolt_root_table_count(root, &count));
  /* table_hashes.csv lists the same tables in the same order after its header. */
  const char *line = strchr((const char *)hashes.data, '\n') + 1;
  for (size_t i = 0; i < count; i++) {
    const char *name = NULL;
    OK(prolly_dolt_root_table_name(root, i, &name));
    CHECK(strncmp(line, name, strlen(name)) == 0 && line[strlen(name)] == ',');
    line = strchr(line, '\n') + 1;

    char rel[512];
    snprintf(rel, sizeof rel, "main/%s.csv", name);
    buf_t want = expected(rel);

    prolly_dolt_table *t = NULL;
    OK(prolly_dolt_table_open(root, name, &t));
    bool keyless = false;
    OK(prolly_dolt_table_keyless(t, &keyless));
    size_t ncols = 0;
    OK(prolly_dolt_table_column_count(t, &ncols));
    buf_t csv = {0};
    for (size_t c = 0; c < ncols; c++) {
      prolly_dolt_column col;
      OK(prolly_dolt_table_column(t, c, &col));
      if (c) buf_put(&csv, ",", 1);
      csv_field(&csv, (const uint8_t *)col.name, strlen(col.name));
    }
    buf_put(&csv, "\n", 1);
    prolly_dolt_rows *rows = NULL;
    OK(prolly_dolt_rows_open(t, &rows));
    prolly_dolt_value *vals = calloc(ncols, sizeof *vals);
    size_t nrows = 0, got_cols = 0;
    prolly_result r;
    while ((r = prolly_dolt_rows_next(rows, vals, ncols, &got_cols)) == PROLLY_RESULT_OK) {
      CHECK(got_cols == ncols);
      for (size_t c = 0; c < ncols; c++) {
        if (c) buf_put(&csv, ",", 1);
        if (vals[c].kind == PROLLY_DOLT_KIND_NULL) CHECK(vals[c].text == NULL);
        else csv_field(&csv, vals[c].text, vals[c].text_len);
      }
      buf_put(&csv, "\n", 1);
      nrows++;
    }
    EXPECT(r, PROLLY_RESULT_END);
    EXPECT(prolly_dolt_rows_next(rows, vals, ncols, &got_cols), PROLLY_RESULT_END);
    CHECK(nrows == csv_records(&want));
    CHECK(nrows > 0);
    if (!keyless) check_same(rel, &csv, &want);
    printf("  %s: %zu rows, %zu columns%s\n", name, nrows, ncols, keyless ? " (keyless)" : "");
    free(vals);
    free(csv.data);
    prolly_dolt_rows_free(rows);
    prolly_dolt_table_free(t);

    /* Export to a file. */
    char path[2048];
    snprintf(path, sizeof path, "%s/%s.csv", tmpdir, name);
    OK(prolly_dolt_export_csv(db, "main", name, path));
    buf_t file = read_file(path);
    check_same(path, &file, &want);
    free(file.data);
    /* Export through a callback. */
    buf_t mem = {0};
    OK(prolly_dolt_export_csv_write(db, "main", name, collect, &mem));
    check_same(rel, &mem, &want);
    free(mem.data);
    free(want.data);
  }
  CHECK(count == 4);
  EXPECT(prolly_dolt_export_csv_write(db, "main", "pairs", refuse, NULL), PROLLY_RESULT_ERR_IO);
  free(hashes.data);
}

/* A cursor's rows (freed) as Dolt's CSV, after a header of `t`'s columns. */
static buf_t rows_csv(prolly_dolt_table *t, prolly_dolt_rows *rows) {
  size_t ncols = 0;
  OK(prolly_dolt_table_column_count(t, &ncols));
  buf_t csv = {0};
  for (size_t c = 0; c < ncols; c++) {
    prolly_dolt_column col;
    OK(prolly_dolt_table_column(t, c, &col));
    if (c) buf_put(&csv, ",", 1);
    csv_field(&csv, (const uint8_t *)col.name, strlen(col.name));
  }
  buf_put(&csv, "\n", 1);
  prolly_dolt_value *vals = calloc(ncols, sizeof *vals);
  size_t got_cols = 0;
  prolly_result r;
  while ((r = prolly_dolt_rows_next(rows, vals, ncols, &got_cols)) == PROLLY_RESULT_OK) {
    for (size_t c = 0; c < ncols; c++) {
      if (c) buf_put(&csv, ",", 1);
      if (vals[c].kind != PROLLY_DOLT_KIND_NULL) csv_field(&csv, vals[c].text, vals[c].text_len);
    }
    buf_put(&csv, "\n", 1);
  }
  EXPECT(r, PROLLY_RESULT_END);
  free(vals);
  prolly_dolt_rows_free(rows);
  return csv;
}

/* NULL keys in bounds (kind NULL: the first key, as in Dolt's indexes) against what Dolt
 * printed: crates/dolt/tests/data/null_keys (db and expected/). */
static void test_null_keys(const char *dir) {
  char path[2048];
  snprintf(path, sizeof path, "%s/db", dir);
  prolly_dolt *db = NULL;
  OK(prolly_dolt_open(path, &db));
  prolly_dolt_root *root = NULL;
  OK(prolly_dolt_root_open(db, "main", PROLLY_DOLT_STATE_COMMITTED, &root));
  prolly_dolt_table *t = NULL;
  OK(prolly_dolt_table_open(root, "n", &t));
  prolly_dolt_value null = {0};
  null.kind = PROLLY_DOLT_KIND_NULL;
  prolly_dolt_value one = int_key(1);
  prolly_dolt_value null_b[2] = {null, text_key("b")};
  prolly_dolt_bound is_null = {PROLLY_BOUND_KIND_INCLUDED, &null, 1};
  prolly_dolt_bound after_null = {PROLLY_BOUND_KIND_EXCLUDED, &null, 1};
  prolly_dolt_bound below_one = {PROLLY_BOUND_KIND_EXCLUDED, &one, 1};
  prolly_dolt_bound from_null_b = {PROLLY_BOUND_KIND_INCLUDED, null_b, 2};
  struct {
    const char *expected, *index;
    prolly_dolt_bound *lo, *hi;
    uint32_t direction;
  } cases[] = {
      {"c_null", "ix_c", &is_null, &is_null, PROLLY_DIRECTION_FORWARD},
      {"c_null_rev", "ix_c", &is_null, &is_null, PROLLY_DIRECTION_BACKWARD},
      {"c_lt_1", "ix_c", &after_null, &below_one, PROLLY_DIRECTION_FORWARD},
      {"cs_null_ge_b", "ix_cs", &from_null_b, &is_null, PROLLY_DIRECTION_FORWARD},
      {"u_null", "ux_u", &is_null, &is_null, PROLLY_DIRECTION_FORWARD},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    prolly_dolt_rows *rows = NULL;
    OK(prolly_dolt_rows_range(t, cases[i].index, cases[i].lo, cases[i].hi, cases[i].direction,
                              0, &rows));
    buf_t got = rows_csv(t, rows);
    char rel[2048];
    snprintf(rel, sizeof rel, "%s/expected/%s.csv", dir, cases[i].expected);
    buf_t want = read_file(rel);
    check_same(rel, &got, &want);
    free(got.data);
    free(want.data);
  }
  /* No primary key is NULL. */
  prolly_dolt_rows *rows = NULL;
  EXPECT(prolly_dolt_rows_get(t, &null, 1, &rows), PROLLY_RESULT_NOT_FOUND);
  prolly_dolt_table_free(t);
  prolly_dolt_root_free(root);
  prolly_dolt_free(db);
  printf("  null keys: %zu ranges\n", sizeof cases / sizeof cases[0]);
}

/* The feature branch: a different state with its own log head. */
static void test_feature(prolly_dolt *db) {
  prolly_dolt_root *working = NULL, *committed = NULL;
  OK(prolly_dolt_root_open(db, "feature", PROLLY_DOLT_STATE_WORKING, &working));
  OK(prolly_dolt_root_open(db, "feature", PROLLY_DOLT_STATE_COMMITTED, &committed));
  prolly_address a, b;
  OK(prolly_dolt_root_address(working, &a));
  OK(prolly_dolt_root_address(committed, &b));
  CHECK(memcmp(&a, &b, sizeof a) == 0); /* feature has no uncommitted changes */
  prolly_dolt_root_free(working);
  prolly_dolt_root_free(committed);
  buf_t want = expected("feature/items.csv");
  buf_t got = {0};
  OK(prolly_dolt_export_csv_write(db, "feature", "items", collect, &got));
  check_same("feature/items.csv", &got, &want);
  free(want.data);
  free(got.data);
}

/* vecdb_journal: a tag, and a branch (wip) with staged and unstaged changes. */
static void test_journal_db(const char *vectors) {
  char dir[1100];
  snprintf(dir, sizeof dir, "%s/dolt-db/vecdb_journal", vectors);
  snprintf(g_expected, sizeof g_expected, "%s/dolt-db/vecdb_journal.expected", vectors);
  prolly_dolt *db = NULL;
  OK(prolly_dolt_open(dir, &db));
  prolly_dolt_refs *tags = NULL;
  OK(prolly_dolt_tags(db, &tags));
  size_t n = 0;
  OK(prolly_dolt_refs_count(tags, &n));
  CHECK(n == 1);
  prolly_dolt_ref tag;
  OK(prolly_dolt_refs_get(tags, 0, &tag));
  CHECK(strcmp(tag.name, "v1") == 0);
  CHECK(strcmp(tag.commit, "2ioepuhbvk38drnjltfsbcd79t9dqofb") == 0);
  CHECK(strcmp(tag.message, "first release (initial load)") == 0);
  prolly_dolt_refs_free(tags);
  /* A tag starts a log at its commit. */
  prolly_dolt_log_iter *lg = NULL;
  prolly_dolt_commit c;
  OK(prolly_dolt_log(db, "v1", &lg));
  OK(prolly_dolt_log_next(lg, &c));
  CHECK(strcmp(c.hash, "2ioepuhbvk38drnjltfsbcd79t9dqofb") == 0);
  prolly_dolt_log_free(lg);
  /* wip: head, staged and working states are three roots (head.csv). */
  const char *states[3] = {"jd3dcehf7ta1se093ant3avu01simf3l", "ee8dpqf1dshdml4h8lv2ahocq8vbaasv",
                           NULL};
  uint32_t codes[3] = {PROLLY_DOLT_STATE_WORKING, PROLLY_DOLT_STATE_STAGED,
                       PROLLY_DOLT_STATE_COMMITTED};
  char text[3][33];
  for (int i = 0; i < 3; i++) {
    prolly_dolt_root *root = NULL;
    OK(prolly_dolt_root_open(db, "wip", codes[i], &root));
    prolly_address a;
    OK(prolly_dolt_root_address(root, &a));
    OK(prolly_address_to_string(&a, text[i], sizeof text[i]));
    if (states[i]) CHECK(strcmp(text[i], states[i]) == 0);
    prolly_dolt_root_free(root);
  }
  CHECK(strcmp(text[2], text[0]) != 0 && strcmp(text[2], text[1]) != 0);
  /* The working state's tables export as dolt sql showed them. */
  prolly_dolt_root *root = NULL;
  OK(prolly_dolt_root_open(db, "wip", PROLLY_DOLT_STATE_WORKING, &root));
  OK(prolly_dolt_root_table_count(root, &n));
  CHECK(n == 5);
  for (size_t i = 0; i < n; i++) {
    const char *name = NULL;
    OK(prolly_dolt_root_table_name(root, i, &name));
    char rel[512];
    snprintf(rel, sizeof rel, "wip/%s.csv", name);
    buf_t want = expected(rel), got = {0};
    OK(prolly_dolt_export_csv_write(db, "wip", name, collect, &got));
    check_same(rel, &got, &want);
    printf("  vecdb_journal %s: identical\n", rel);
    free(want.data);
    free(got.data);
  }
  prolly_dolt_root_free(root);
  prolly_dolt_free(db);
}

int main(int argc, char **argv) {
  const char *vectors = argc > 1 ? argv[1] : getenv("PROLLY_VECTORS");
  if (vectors && *vectors) {
    snprintf(g_db, sizeof g_db, "%s/dolt-db/vecdb", vectors);
    snprintf(g_expected, sizeof g_expected, "%s/dolt-db/vecdb.expected", vectors);
  }
  char probe[1100];
  snprintf(probe, sizeof probe, "%s/.dolt", g_db);
  if (!vectors || !*vectors || access(probe, R_OK) != 0) {
    const char *allow = getenv("PROLLY_ALLOW_MISSING_VECTORS");
    if (allow && strcmp(allow, "1") == 0) {
      printf("SKIPPED: vectors not found\n");
      return 0;
    }
    fprintf(stderr, "test_dolt: vectors not found (pass the vectors directory as argv[1] or set "
                    "PROLLY_VECTORS; PROLLY_ALLOW_MISSING_VECTORS=1 skips)\n");
    return 1;
  }
  char tmpdir[512];
  make_temp_dir(tmpdir, sizeof tmpdir);

  prolly_dolt *db = NULL;
  OK(prolly_dolt_open(g_db, &db));
  test_errors(db);
  test_branches(db);
  test_log(db);
  prolly_dolt_root *root = NULL;
  OK(prolly_dolt_root_open(db, "main", PROLLY_DOLT_STATE_WORKING, &root));
  prolly_dolt_free(db); /* handles made from it keep it alive */
  db = NULL;
  test_schema(root);
  test_typed_values(root);
  test_keyed(root);
  prolly_dolt_root_free(root);

  OK(prolly_dolt_open(g_db, &db));
  EXPECT(prolly_dolt_set_keep_budget(NULL, 0), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  /* A budget smaller than the tables: every read below is the same. */
  OK(prolly_dolt_set_keep_budget(db, 4096));
  OK(prolly_dolt_root_open(db, "main", PROLLY_DOLT_STATE_WORKING, &root));
  test_tables(db, root, tmpdir);
  prolly_dolt_root_free(root);
  test_feature(db);
  prolly_dolt_free(db);
  test_journal_db(vectors);
  const char *null_keys = argc > 2 ? argv[2] : getenv("PROLLY_NULL_KEYS_DATA");
  if (null_keys && *null_keys) test_null_keys(null_keys);
  rm_rf(tmpdir);
  printf("test_dolt: %d checks passed\n", g_checks);
  return 0;
}
