/* Prints a table of a Dolt database as CSV, exactly as `dolt sql -r csv` would:
 *
 *   dolt_export DBDIR BRANCH TABLE
 *
 * BRANCH may also be a tag or a commit hash; a branch is read with its uncommitted changes
 * (its working set), as `dolt sql` does. The database is only read. */
#include <stdio.h>
#include <string.h>

#include "prollystore.h"

static int to_stdout(void *user, const uint8_t *data, size_t len) {
  (void)user;
  return fwrite(data, 1, len, stdout) == len ? 0 : 1;
}

static int fail(const char *what, prolly_result r) {
  char detail[512];
  prolly_last_error_message(detail, sizeof detail);
  fprintf(stderr, "dolt_export: %s: %s (%s)\n", what, prolly_result_message((int)r), detail);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s DBDIR BRANCH TABLE\n", argv[0]);
    return 2;
  }
  prolly_dolt *db = NULL;
  prolly_result r = prolly_dolt_open(argv[1], &db);
  if (r != PROLLY_RESULT_OK) return fail(argv[1], r);
  r = prolly_dolt_export_csv_write(db, argv[2], argv[3], to_stdout, NULL);
  prolly_dolt_free(db);
  if (r != PROLLY_RESULT_OK) return fail(argv[3], r);
  return fflush(stdout) == 0 ? 0 : 1;
}
