/* Row diffs between states of a Dolt database through the C ABI, on the small database made by
 * the real Dolt CLI in crates/dolt/tests/data/dolt_diff (its expected/ files hold what Dolt's
 * dolt_diff returned; the values checked here are those).
 *
 *   test_dolt_diff [DB_DIR]     default: crates/dolt/tests/data/dolt_diff/db (run from the
 *                               repository root, as scripts/c-tests.sh does) */
#include "common.h"

#include <stdbool.h>
#include <stdint.h>

/* The text of a value ("" for NULL). */
static const char *text_of(const prolly_dolt_value *v) { return v->text ? (const char *)v->text : ""; }

int main(int argc, char **argv) {
  (void)make_temp_dir; /* common.h helpers this test has no use for */
  (void)rm_rf;
  const char *dir = argc > 1 ? argv[1] : "crates/dolt/tests/data/dolt_diff/db";
  prolly_dolt *db = NULL;
  OK(prolly_dolt_open(dir, &db));

  /* HEAD~2 -> HEAD~1 on t: id 2 renamed b -> bb, id 3 removed, id 4 added, in key order. */
  prolly_dolt_diff *d = NULL;
  OK(prolly_dolt_diff_open(db, "HEAD~2", "HEAD~1", "t", &d));
  prolly_dolt_diff_info info;
  OK(prolly_dolt_diff_get_info(d, &info));
  CHECK(info.from_column_count == 3 && info.to_column_count == 3);
  CHECK(info.from_exists && info.to_exists && !info.schema_changed);
  const char *name = NULL;
  OK(prolly_dolt_diff_column_name(d, true, 1, &name));
  CHECK(strcmp(name, "name") == 0);
  EXPECT(prolly_dolt_diff_column_name(d, false, 3, &name), PROLLY_RESULT_ERR_INVALID_ARGUMENT);

  prolly_dolt_value from[4], to[4];
  uint32_t kind = 0;
  EXPECT(prolly_dolt_diff_next(d, &kind, from, 2, to, 4), PROLLY_RESULT_ERR_BUFFER_TOO_SMALL);
  OK(prolly_dolt_diff_next(d, &kind, from, 4, to, 4));
  CHECK(kind == PROLLY_DOLT_CHANGE_MODIFIED);
  CHECK(from[0].kind == PROLLY_DOLT_KIND_INT && from[0].int_value == 2 && to[0].int_value == 2);
  CHECK(strcmp(text_of(&from[1]), "b") == 0 && strcmp(text_of(&to[1]), "bb") == 0);
  CHECK(to[2].kind == PROLLY_DOLT_KIND_DOUBLE && to[2].double_value == 2.5);
  OK(prolly_dolt_diff_next(d, &kind, from, 4, to, 4));
  CHECK(kind == PROLLY_DOLT_CHANGE_REMOVED);
  CHECK(from[0].int_value == 3 && from[2].kind == PROLLY_DOLT_KIND_NULL);
  CHECK(to[0].kind == PROLLY_DOLT_KIND_NULL && to[0].text == NULL);
  OK(prolly_dolt_diff_next(d, &kind, from, 4, to, 4));
  CHECK(kind == PROLLY_DOLT_CHANGE_ADDED);
  CHECK(to[0].int_value == 4 && strcmp(text_of(&to[1]), "d") == 0);
  CHECK(from[1].kind == PROLLY_DOLT_KIND_NULL);
  EXPECT(prolly_dolt_diff_next(d, &kind, from, 4, to, 4), PROLLY_RESULT_END);
  EXPECT(prolly_dolt_diff_next(d, &kind, from, 4, to, 4), PROLLY_RESULT_END);
  prolly_dolt_diff_free(d);

  /* Keyless kl, HEAD~1 -> HEAD: the row (1,x) stored 3 times, then deleted: 3 removed rows. */
  OK(prolly_dolt_diff_open(db, "HEAD~1", "HEAD", "kl", &d));
  int removed = 0;
  prolly_result r;
  while ((r = prolly_dolt_diff_next(d, &kind, from, 4, to, 4)) == PROLLY_RESULT_OK) {
    CHECK(kind == PROLLY_DOLT_CHANGE_REMOVED && from[0].int_value == 1);
    CHECK(strcmp(text_of(&from[1]), "x") == 0);
    removed++;
  }
  EXPECT(r, PROLLY_RESULT_END);
  CHECK(removed == 3);
  prolly_dolt_diff_free(d);

  /* A table only on the branch feat: every row added; the from side has the to side's columns. */
  OK(prolly_dolt_diff_open(db, "main", "feat", "nt", &d));
  OK(prolly_dolt_diff_get_info(d, &info));
  CHECK(!info.from_exists && info.to_exists && info.schema_changed && info.from_column_count == 1);
  OK(prolly_dolt_diff_next(d, &kind, from, 1, to, 1));
  CHECK(kind == PROLLY_DOLT_CHANGE_ADDED && to[0].int_value == 1);
  EXPECT(prolly_dolt_diff_next(d, &kind, from, 1, to, 1), PROLLY_RESULT_END);
  prolly_dolt_diff_free(d);

  /* Uncommitted work: STAGED -> WORKING removes id 4. */
  OK(prolly_dolt_diff_open(db, "STAGED", "WORKING", "t", &d));
  OK(prolly_dolt_diff_next(d, &kind, from, 4, to, 4));
  CHECK(kind == PROLLY_DOLT_CHANGE_REMOVED && from[0].int_value == 4);
  EXPECT(prolly_dolt_diff_next(d, &kind, from, 4, to, 4), PROLLY_RESULT_END);
  prolly_dolt_diff_free(d);

  /* Errors: unknown table, unknown revision, a changed primary key; NULL arguments. */
  d = NULL;
  EXPECT(prolly_dolt_diff_open(db, "HEAD~1", "HEAD", "nope", &d), PROLLY_RESULT_NOT_FOUND);
  EXPECT(prolly_dolt_diff_open(db, "nobranch", "HEAD", "t", &d), PROLLY_RESULT_NOT_FOUND);
  /* Rows cannot be matched across a primary-key change (Dolt skips them too): refused. */
  EXPECT(prolly_dolt_diff_open(db, "HEAD~1", "HEAD", "pk", &d), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  EXPECT(prolly_dolt_diff_open(db, NULL, "HEAD", "t", &d), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  CHECK(d == NULL);
  EXPECT(prolly_dolt_diff_next(NULL, &kind, from, 4, to, 4), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  prolly_dolt_diff_free(NULL);

  prolly_dolt_free(db);
  printf("test_dolt_diff: %d checks passed\n", g_checks);
  return 0;
}
