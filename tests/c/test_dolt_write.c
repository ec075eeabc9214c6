/* Row writes through the C ABI: a copy of a database right after `dolt init` (from the
 * golden vectors, dolt-write/basic/before) opened for writing, a table created from CREATE
 * TABLE text, rows inserted / updated / upserted / deleted as typed values (and text parsed
 * as Dolt prints it), a rejected change leaving the journal untouched, a second writer
 * refused, a commit, and the rows read back with the reader.
 * Usage: test_dolt_write VECTORS_DIR */
#include "common.h"

#include <sys/stat.h>

static prolly_dolt_value v_int(int64_t x) {
  prolly_dolt_value v = {0};
  v.kind = PROLLY_DOLT_KIND_INT;
  v.int_value = x;
  return v;
}

static prolly_dolt_value v_text(const char *s) {
  prolly_dolt_value v = {0};
  v.kind = PROLLY_DOLT_KIND_TEXT;
  v.text = (const uint8_t *)s;
  v.text_len = strlen(s);
  return v;
}

static prolly_dolt_value v_dec(const char *s) {
  prolly_dolt_value v = v_text(s);
  v.kind = PROLLY_DOLT_KIND_DECIMAL;
  return v;
}

static prolly_dolt_value v_null(void) {
  prolly_dolt_value v = {0};
  v.kind = PROLLY_DOLT_KIND_NULL;
  return v;
}

static long long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s VECTORS_DIR\n", argv[0]);
    return 2;
  }
  char src[4096];
  snprintf(src, sizeof src, "%s/dolt-write/basic/before/.dolt", argv[1]);
  struct stat st;
  if (stat(src, &st) != 0) {
    if (getenv("PROLLY_ALLOW_MISSING_VECTORS")) {
      printf("SKIPPED: vectors not found\n");
      return 0;
    }
    fprintf(stderr, "vectors not found at %s\n", src);
    return 1;
  }
  char tmp[1024], cmd[16384], journal[1200];
  make_temp_dir(tmp, sizeof tmp);
  snprintf(cmd, sizeof cmd, "cp -r '%s' '%s/.dolt' && chmod -R u+w '%s'", src, tmp, tmp);
  CHECK(system(cmd) == 0);
  snprintf(journal, sizeof journal, "%s/.dolt/noms/vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv", tmp);

  prolly_dolt_writer *w = NULL;
  OK(prolly_dolt_writer_open(tmp, &w));
  char branch[64];
  CHECK(prolly_dolt_writer_branch(w, branch, sizeof branch) == 4 && strcmp(branch, "main") == 0);

  /* While this writer holds Dolt's lock, nobody else may write. */
  prolly_dolt_writer *second = NULL;
  EXPECT(prolly_dolt_writer_open(tmp, &second), PROLLY_RESULT_ERR_LOCKED);
  CHECK(second == NULL);

  OK(prolly_dolt_writer_create_table(
      w, "CREATE TABLE items (id int PRIMARY KEY, name varchar(20) NOT NULL, price decimal(8,2),"
         " UNIQUE KEY uq_name (name))"));
  EXPECT(prolly_dolt_writer_create_table(w, "CREATE TABLE items (id int PRIMARY KEY)"),
         PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  /* Malformed SQL is bad input; a clause Dolt takes but this library does not is unsupported. */
  EXPECT(prolly_dolt_writer_create_table(w, "CREATE TABLE (nonsense"),
         PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  EXPECT(prolly_dolt_writer_create_table(w, "CREATE TABLE copy LIKE items"),
         PROLLY_RESULT_ERR_UNSUPPORTED);

  const char *cols[] = {"id", "name", "price"};
  prolly_dolt_value rows[] = {
      v_int(1), v_text("one"), v_text("1.50"),
      v_int(2), v_text("two"), v_null(),
      v_int(3), v_text("three"), v_text("3.00"),
  };
  OK(prolly_dolt_writer_apply(w, PROLLY_DOLT_ROW_MODE_INSERT, "items", cols, 3, rows, 3));

  /* Rejected changes: duplicate key, duplicate unique name, NULL in NOT NULL, bad mode. */
  EXPECT(prolly_dolt_writer_apply(w, PROLLY_DOLT_ROW_MODE_INSERT, "items", cols, 3, rows, 1),
         PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  char msg[512];
  prolly_last_error_message(msg, sizeof msg);
  CHECK(strstr(msg, "duplicate") != NULL);
  prolly_dolt_value dup_name[] = {v_int(9), v_text("one"), v_null()};
  EXPECT(prolly_dolt_writer_apply(w, PROLLY_DOLT_ROW_MODE_INSERT, "items", cols, 3, dup_name, 1),
         PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  prolly_dolt_value null_name[] = {v_int(9), v_null(), v_null()};
  EXPECT(prolly_dolt_writer_apply(w, PROLLY_DOLT_ROW_MODE_INSERT, "items", cols, 3, null_name, 1),
         PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  EXPECT(prolly_dolt_writer_apply(w, 77, "items", cols, 3, rows, 1), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  EXPECT(prolly_dolt_writer_apply(w, PROLLY_DOLT_ROW_MODE_INSERT, "nope", cols, 3, rows, 1),
         PROLLY_RESULT_NOT_FOUND);

  const char *upd_cols[] = {"id", "price"};
  prolly_dolt_value upd[] = {v_int(2), v_text("22.25")};
  OK(prolly_dolt_writer_apply(w, PROLLY_DOLT_ROW_MODE_UPDATE, "items", upd_cols, 2, upd, 1));
  /* Decimal text as Dolt reads it: an exponent, and a DECIMAL value stored at the column's scale. */
  prolly_dolt_value ups[] = {v_int(3), v_text("drei"), v_text("3.30"),
                             v_int(4), v_text("four"), v_text("2.5E1"),
                             v_int(5), v_text("five"), v_dec("1.5")};
  OK(prolly_dolt_writer_apply(w, PROLLY_DOLT_ROW_MODE_UPSERT, "items", cols, 3, ups, 3));
  const char *key_col[] = {"id"};
  prolly_dolt_value del[] = {v_int(1)};
  OK(prolly_dolt_writer_apply(w, PROLLY_DOLT_ROW_MODE_DELETE, "items", key_col, 1, del, 1));

  /* ALTER TABLE: an index over the rows; an unknown table, column or clause changes nothing. */
  OK(prolly_dolt_writer_alter(w, "ALTER TABLE items ADD INDEX idx_price (price)"));
  EXPECT(prolly_dolt_writer_alter(w, "ALTER TABLE nope ADD INDEX i (x)"), PROLLY_RESULT_NOT_FOUND);
  EXPECT(prolly_dolt_writer_alter(w, "ALTER TABLE items DROP COLUMN nope"),
         PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  EXPECT(prolly_dolt_writer_alter(w, "ALTER TABLE items FROB"), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  EXPECT(prolly_dolt_writer_alter(w, "ALTER TABLE items ADD FULLTEXT INDEX ft (name)"),
         PROLLY_RESULT_ERR_UNSUPPORTED);

  /* Nothing reached the journal yet: rejected or not, changes stay in memory. */
  long long before = file_size(journal);
  prolly_address commit;
  OK(prolly_dolt_writer_commit(w, "C rows", "C Tester", "c@example.com", 1704067200000LL, NULL, NULL,
                               -1, &commit));
  CHECK(file_size(journal) > before);
  /* Nothing left to commit. */
  long long after = file_size(journal);
  EXPECT(prolly_dolt_writer_commit(w, "again", "C Tester", "c@example.com", 1704067200000LL, NULL,
                                   NULL, -1, NULL),
         PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  CHECK(file_size(journal) == after);
  prolly_dolt_writer_free(w);
  prolly_dolt_writer_free(NULL);

  /* Read back: rows 2, 3, 4 (2 updated, 3 upserted), 1 gone. */
  prolly_dolt *db = NULL;
  OK(prolly_dolt_open(tmp, &db));
  prolly_dolt_root *root = NULL;
  OK(prolly_dolt_root_open(db, "main", PROLLY_DOLT_STATE_COMMITTED, &root));
  prolly_dolt_table *t = NULL;
  OK(prolly_dolt_table_open(root, "items", &t));
  prolly_dolt_rows *r = NULL;
  prolly_dolt_value key = v_int(3);
  OK(prolly_dolt_rows_get(t, &key, 1, &r));
  prolly_dolt_value got[3];
  size_t n = 0;
  OK(prolly_dolt_rows_next(r, got, 3, &n));
  CHECK(n == 3);
  CHECK(got[1].text_len == 4 && memcmp(got[1].text, "drei", 4) == 0);
  CHECK(got[2].kind == PROLLY_DOLT_KIND_DECIMAL && got[2].text_len == 4 && memcmp(got[2].text, "3.30", 4) == 0);
  prolly_dolt_rows_free(r);
  key = v_int(2);
  OK(prolly_dolt_rows_get(t, &key, 1, &r));
  OK(prolly_dolt_rows_next(r, got, 3, &n));
  CHECK(got[2].text_len == 5 && memcmp(got[2].text, "22.25", 5) == 0);
  prolly_dolt_rows_free(r);
  key = v_int(4);
  OK(prolly_dolt_rows_get(t, &key, 1, &r));
  OK(prolly_dolt_rows_next(r, got, 3, &n));
  CHECK(got[2].text_len == 5 && memcmp(got[2].text, "25.00", 5) == 0);
  prolly_dolt_rows_free(r);
  key = v_int(5);
  OK(prolly_dolt_rows_get(t, &key, 1, &r));
  OK(prolly_dolt_rows_next(r, got, 3, &n));
  CHECK(got[2].text_len == 4 && memcmp(got[2].text, "1.50", 4) == 0);
  prolly_dolt_rows_free(r);
  key = v_int(1);
  r = NULL;
  EXPECT(prolly_dolt_rows_get(t, &key, 1, &r), PROLLY_RESULT_NOT_FOUND);

  /* Arrow in: the committed table read as an Arrow stream, written into a twin table. */
  struct ArrowArrayStream s;
  OK(prolly_dolt_table_arrow(t, 0, &s));
  prolly_dolt_table_free(t);
  prolly_dolt_root_free(root);
  prolly_dolt_free(db);
  OK(prolly_dolt_writer_open(tmp, &w));
  OK(prolly_dolt_writer_create_table(
      w, "CREATE TABLE twin (id int PRIMARY KEY, name varchar(20) NOT NULL, price decimal(8,2))"));
  OK(prolly_dolt_writer_apply_arrow(w, PROLLY_DOLT_ROW_MODE_INSERT, "twin", &s));
  CHECK(s.release == NULL); /* the call took the stream */
  EXPECT(prolly_dolt_writer_apply_arrow(w, PROLLY_DOLT_ROW_MODE_INSERT, "twin", NULL),
         PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  OK(prolly_dolt_writer_commit(w, "twin", "C Tester", "c@example.com", 1704067200000LL, NULL, NULL,
                               -1, NULL));
  prolly_dolt_writer_free(w);
  OK(prolly_dolt_open(tmp, &db));
  OK(prolly_dolt_root_open(db, "main", PROLLY_DOLT_STATE_COMMITTED, &root));
  OK(prolly_dolt_table_open(root, "twin", &t));
  key = v_int(4);
  OK(prolly_dolt_rows_get(t, &key, 1, &r));
  OK(prolly_dolt_rows_next(r, got, 3, &n));
  CHECK(n == 3 && got[1].text_len == 4 && memcmp(got[1].text, "four", 4) == 0);
  CHECK(got[2].kind == PROLLY_DOLT_KIND_DECIMAL && got[2].text_len == 5 &&
        memcmp(got[2].text, "25.00", 5) == 0);
  prolly_dolt_rows_free(r);
  prolly_dolt_table_free(t);
  prolly_dolt_root_free(root);
  prolly_dolt_free(db);
  rm_rf(tmp);
  printf("test_dolt_write: %d checks passed\n", g_checks);
  return 0;
}
