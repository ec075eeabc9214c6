#!/usr/bin/env bash
# Builds a Dolt database whose dataset map, table maps and commit closures span many nodes:
# 300 tables, 200 branches, 12 tags, ~460 commits with 8 merges, all through one `dolt sql`.
set -euo pipefail
DOLT=${DOLT:-dolt}
DB=${1:?usage: make_vc_chunked.sh DBDIR}
export TZ=UTC HOME=$(mktemp -d)
"$DOLT" config --global --add user.name 'Evidence Bot' >/dev/null
"$DOLT" config --global --add user.email ev@example.com >/dev/null
"$DOLT" config --global --add metrics.disabled true >/dev/null
rm -rf "$DB"; mkdir -p "$DB"; cd "$DB"
"$DOLT" init --initial-branch main >/dev/null
{
  for t in $(seq 1 300); do echo "CREATE TABLE a_table_with_a_rather_long_name_$t (id INT PRIMARY KEY, v INT);"; done
  echo "CALL DOLT_COMMIT('-Am', 'tables');"
  for i in $(seq 1 400); do
    echo "INSERT INTO a_table_with_a_rather_long_name_$(( (i % 300) + 1 )) VALUES ($i, $i);"
    echo "CALL DOLT_COMMIT('-Am', 'commit $i');"
    if [ $((i % 50)) = 0 ]; then
      echo "CALL DOLT_CHECKOUT('-b', 'side_$i');"
      for k in 1 2 3; do
        echo "INSERT INTO a_table_with_a_rather_long_name_7 VALUES ($((10000*i+k)), $k);"
        echo "CALL DOLT_COMMIT('-Am', 'side $i.$k');"
      done
      echo "CALL DOLT_CHECKOUT('main');"
      echo "INSERT INTO a_table_with_a_rather_long_name_9 VALUES ($((20000*i)), 1);"
      echo "CALL DOLT_COMMIT('-Am', 'main $i');"
      echo "CALL DOLT_MERGE('--no-ff', '-m', 'merge side_$i', 'side_$i');"
    fi
  done
  for b in $(seq 1 200); do echo "CALL DOLT_BRANCH('a_branch_with_a_long_name_$b');"; done
  for t in $(seq 1 12); do echo "CALL DOLT_TAG('tag_$t', 'HEAD~$t');"; done
} > /tmp/vc_build_$$.sql
"$DOLT" sql < /tmp/vc_build_$$.sql >/dev/null
rm -f /tmp/vc_build_$$.sql
"$DOLT" gc >/dev/null 2>&1
rm -rf .dolt/stats; find .dolt -name LOCK -delete
"$DOLT" log --oneline | wc -l
