# scripts/procs.sh - what the scripts that start servers share (sourced, not run):
#
#   free_port            a free TCP port on 127.0.0.1
#   wait_http URL SECS   until URL answers 2xx, or return 1 after SECS
#   stop_started         SIGTERM to every pid in PIDS, up to 5 s to exit, then SIGKILL
#                        (uvicorn may wait on open streams); only the processes a
#                        script started (its PIDS array) are ever signalled.
# Everything on loopback.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

wait_http() {
  local deadline=$((SECONDS + $2))
  until curl -fsS -o /dev/null "$1" 2>/dev/null; do
    [ $SECONDS -ge $deadline ] && return 1
    sleep 0.2
  done
}

stop_started() {
  local pid alive
  [ "${#PIDS[@]}" -gt 0 ] || return 0
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
  for _ in $(seq 50); do
    alive=0
    for pid in "${PIDS[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
  return 0
}
