/* prolly_dolt_clone and prolly_dolt_open_remote from C (library built with the `dolt-remote`
 * feature; compiled and run by crates/ffi/tests/dolt_remote_c.rs):
 *
 *   test_dolt_clone URL DIR BRANCH TABLE EXPECTED_CSV
 *
 * clones URL (a file:// remote or a dolt sql-server's remotesapi) into DIR, opens the clone and
 * checks TABLE at BRANCH exports exactly EXPECTED_CSV (made by `dolt sql -r csv`); opens URL in
 * place (no clone) and checks the same export from there. Then the bad
 * inputs: a second clone into the now non-empty DIR, an unknown scheme and a file:// directory
 * that is no Dolt remote each fail with their own code and message, and create nothing; and
 * prolly_dolt_remote_credentials (a user with no password anywhere is refused). */
#include "../common.h"

#include <sys/stat.h>

struct buf {
  char *data;
  size_t len;
};

static int to_buf(void *user, const uint8_t *data, size_t len) {
  struct buf *b = user;
  char *grown = realloc(b->data, b->len + len + 1);
  if (!grown) return 1;
  memcpy(grown + b->len, data, len);
  b->data = grown;
  b->len += len;
  b->data[b->len] = 0;
  return 0;
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *data = malloc((size_t)n + 1);
  if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) exit(1);
  data[n] = 0;
  fclose(f);
  *len = (size_t)n;
  return data;
}

static void last_error(char *msg, size_t len) { prolly_last_error_message(msg, len); }

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s URL DIR BRANCH TABLE EXPECTED_CSV\n", argv[0]);
    return 2;
  }
  const char *url = argv[1], *dir = argv[2], *branch = argv[3], *table = argv[4];
  OK(prolly_dolt_clone(url, dir));

  prolly_dolt *db = NULL;
  OK(prolly_dolt_open(dir, &db));
  struct buf got = {0};
  OK(prolly_dolt_export_csv_write(db, branch, table, to_buf, &got));
  prolly_dolt_free(db);
  size_t want_len = 0;
  char *want = read_file(argv[5], &want_len);
  CHECK(got.len == want_len);
  CHECK(memcmp(got.data, want, want_len) == 0);
  free(got.data);

  /* The remote read in place: the same bytes, with a small cache and with the default. */
  size_t caches[2] = {1 << 16, 0};
  for (int i = 0; i < 2; i++) {
    prolly_dolt *remote = NULL;
    OK(prolly_dolt_open_remote(url, caches[i], &remote));
    struct buf in_place = {0};
    OK(prolly_dolt_export_csv_write(remote, branch, table, to_buf, &in_place));
    prolly_dolt_free(remote);
    CHECK(in_place.len == want_len);
    CHECK(memcmp(in_place.data, want, want_len) == 0);
    free(in_place.data);
  }
  free(want);

  /* Bad input: one message each, nothing created. */
  char msg[512];
  EXPECT(prolly_dolt_clone(url, dir), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  last_error(msg, sizeof msg);
  CHECK(strstr(msg, "not empty") != NULL);

  char tmp[256], dest[300];
  make_temp_dir(tmp, sizeof tmp);
  snprintf(dest, sizeof dest, "%s/clone", tmp);
  struct stat st;
  EXPECT(prolly_dolt_clone("gs://bucket/db", dest), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  last_error(msg, sizeof msg);
  CHECK(strstr(msg, "unknown remote scheme") != NULL);
  CHECK(stat(dest, &st) != 0);

  char not_remote[300];
  snprintf(not_remote, sizeof not_remote, "file://%s", tmp);
  prolly_result r = prolly_dolt_clone(not_remote, dest);
  CHECK(r != PROLLY_RESULT_OK);
  last_error(msg, sizeof msg);
  CHECK(strstr(msg, "not a Dolt file remote") != NULL);
  CHECK(stat(dest, &st) != 0);

  EXPECT(prolly_dolt_clone(NULL, dest), PROLLY_RESULT_ERR_NULL_ARGUMENT);

  prolly_dolt *none = NULL;
  EXPECT(prolly_dolt_open_remote("gs://bucket/db", 0, &none), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  last_error(msg, sizeof msg);
  CHECK(strstr(msg, "unknown remote scheme") != NULL);
  CHECK(prolly_dolt_open_remote(not_remote, 0, &none) != PROLLY_RESULT_OK);
  CHECK(none == NULL);
  EXPECT(prolly_dolt_open_remote(NULL, 0, &none), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  EXPECT(prolly_dolt_open_remote(url, 0, NULL), PROLLY_RESULT_ERR_NULL_ARGUMENT);

  /* Credentials (sent to a dolt sql-server; a file:// remote has no users): a user without a
   * password and no DOLT_REMOTE_PASSWORD is refused by name; set ones leave a clone of a
   * file:// remote as it was; a NULL user clears them. */
  unsetenv("DOLT_REMOTE_PASSWORD");
  EXPECT(prolly_dolt_remote_credentials("alice", NULL), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  last_error(msg, sizeof msg);
  CHECK(strstr(msg, "DOLT_REMOTE_PASSWORD") != NULL);
  OK(prolly_dolt_remote_credentials("alice", "secret"));
  OK(prolly_dolt_clone(url, dest));
  rm_rf(dest);
  setenv("DOLT_REMOTE_PASSWORD", "secret", 1);
  OK(prolly_dolt_remote_credentials("alice", NULL));
  OK(prolly_dolt_remote_credentials(NULL, NULL));
  rm_rf(tmp);
  printf("test_dolt_clone: %d checks passed (%s cloned and read in place, %s/%s identical to "
         "dolt's)\n",
         g_checks, url, branch, table);
  return 0;
}
