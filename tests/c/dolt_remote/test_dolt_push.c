/* prolly_dolt_push, prolly_dolt_fetch and prolly_dolt_pull from C (library built with the
 * `dolt-remote` feature; compiled and run by crates/ffi/tests/dolt_remote_c.rs):
 *
 *   test_dolt_push SRC URL CLONE TABLE
 *   test_dolt_push pull DIR
 *
 * SRC is a Dolt database whose remote `origin` is URL (an empty file:// directory); its
 * `main` is pushed there, cloned into CLONE, fetched and pulled (up to date), pushed again
 * (up to date), and TABLE of the clone exports exactly as SRC's. Then the bad inputs: an
 * unknown remote and NULL arguments each fail with their own code and message.
 *
 * `pull DIR`: fetches `origin` with prune, then pulls it into DIR (the test driver checks what
 * moved and what was pruned). */
#include "../common.h"

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

static struct buf export_table(const char *dir, const char *table) {
  prolly_dolt *db = NULL;
  struct buf out = {0};
  OK(prolly_dolt_open(dir, &db));
  OK(prolly_dolt_export_csv_write(db, "main", table, to_buf, &out));
  prolly_dolt_free(db);
  return out;
}

int main(int argc, char **argv) {
  (void)rm_rf; /* common.h helpers this test has no use for */
  (void)make_temp_dir;
  if (argc == 3 && strcmp(argv[1], "pull") == 0) {
    OK(prolly_dolt_fetch(argv[2], "origin", true));
    OK(prolly_dolt_pull(argv[2], "origin", NULL));
    printf("test_dolt_push pull: %d checks passed (%s)\n", g_checks, argv[2]);
    return 0;
  }
  if (argc != 5) {
    fprintf(stderr, "usage: %s SRC URL CLONE TABLE | %s pull DIR\n", argv[0], argv[0]);
    return 2;
  }
  const char *src = argv[1], *url = argv[2], *clone = argv[3], *table = argv[4];
  OK(prolly_dolt_push(src, "origin", "main"));
  OK(prolly_dolt_push(src, "origin", "main")); /* up to date */
  OK(prolly_dolt_clone(url, clone));
  OK(prolly_dolt_fetch(clone, "origin", false));
  OK(prolly_dolt_fetch(clone, "origin", true)); /* nothing to prune */
  OK(prolly_dolt_pull(clone, "origin", NULL));
  OK(prolly_dolt_pull(clone, "origin", "main"));
  struct buf a = export_table(src, table), b = export_table(clone, table);
  CHECK(a.len == b.len && a.len > 0);
  CHECK(memcmp(a.data, b.data, a.len) == 0);
  free(a.data);
  free(b.data);

  char msg[512];
  EXPECT(prolly_dolt_push(src, "nosuch", "main"), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  prolly_last_error_message(msg, sizeof msg);
  CHECK(strstr(msg, "unknown remote") != NULL);
  EXPECT(prolly_dolt_fetch(clone, "nosuch", false), PROLLY_RESULT_ERR_INVALID_ARGUMENT);
  EXPECT(prolly_dolt_pull(NULL, "origin", NULL), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  EXPECT(prolly_dolt_push(src, "origin", NULL), PROLLY_RESULT_ERR_NULL_ARGUMENT);
  printf("test_dolt_push: %d checks passed (%s pushed to %s, cloned, %s identical)\n", g_checks,
         src, url, table);
  return 0;
}
