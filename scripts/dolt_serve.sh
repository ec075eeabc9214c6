# Sourced by the remote benchmarks (dolt_clone_bench.sh, dolt_push_bench.sh): serves a copy of
# the Dolt database $db from `dolt sql-server --remotesapi-port` on free local ports, with a
# private $HOME whose dolt config names a bench user. Needs $dolt and $db set; sets $work (a
# temporary directory, removed on exit with the server stopped), $server (its pid) and $url
# (the remote's URL). $work/served holds the served copy, $work/server.log its output.
work=$(mktemp -d)
mkdir -p "$work/home" "$work/served"
export HOME="$work/home" TZ=UTC
"$dolt" config --global --add user.name bench >/dev/null
"$dolt" config --global --add user.email bench@example.com >/dev/null
"$dolt" config --global --add metrics.disabled true >/dev/null
name=$(basename "$db")
cp -r "$db" "$work/served/$name"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port)
sqlport=$(free_port)
(cd "$work/served" && exec "$dolt" sql-server --host 127.0.0.1 --port "$sqlport" --remotesapi-port "$port" >"$work/server.log" 2>&1) &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do
  (echo >/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break
  sleep 0.1
done
url="http://127.0.0.1:$port/$name"
