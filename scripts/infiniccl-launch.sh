#!/usr/bin/env bash
# Starts a multi-process InfiniCCL job on this host, as torchrun would: N copies of a program,
# each with RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT set, so
# that infinicclCommInitFromEnv joins them. Waits for all of them; when one fails, the others are
# stopped after a grace period, and the job fails. The whole job is bounded by --timeout.
#
#   scripts/infiniccl-launch.sh -n 4 [--port P] [--timeout S] -- program [args...]
#
# The port is a free one picked at random unless given. Exit status: 0 when every rank exited 0,
# otherwise the first failing rank's status (124 when the job ran out of time).
set -uo pipefail

usage() {
  echo "usage: $0 -n RANKS [--port PORT] [--timeout SECONDS] -- program [args...]" >&2
  exit 2
}

ranks=0
port=""
timeout=600
while [ $# -gt 0 ]; do
  case "$1" in
    -n) ranks="${2:-}"; shift 2 ;;
    --port) port="${2:-}"; shift 2 ;;
    --timeout) timeout="${2:-}"; shift 2 ;;
    --) shift; break ;;
    *) usage ;;
  esac
done
[ $# -gt 0 ] || usage
[[ "$ranks" =~ ^[1-9][0-9]*$ ]] || usage
[[ "$timeout" =~ ^[1-9][0-9]*$ ]] || usage

# A port nothing listens on: bash's /dev/tcp connects where a server is.
port_is_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
if [ -z "$port" ]; then
  for _ in $(seq 1 50); do
    candidate=$((20000 + RANDOM % 40000))
    if port_is_free "$candidate"; then port=$candidate; break; fi
  done
  [ -n "$port" ] || { echo "infiniccl-launch: no free port found" >&2; exit 1; }
fi

pids=()
for rank in $(seq 0 $((ranks - 1))); do
  RANK=$rank WORLD_SIZE=$ranks LOCAL_RANK=$rank LOCAL_WORLD_SIZE=$ranks \
    MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$@" &
  pids+=($!)
done

stop_all() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  sleep 2
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null; done
}

status=0
deadline=$((SECONDS + timeout))
remaining=("${pids[@]}")
while [ ${#remaining[@]} -gt 0 ]; do
  still=()
  for pid in "${remaining[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      still+=("$pid")
      continue
    fi
    wait "$pid"
    code=$?
    if [ "$code" -ne 0 ] && [ "$status" -eq 0 ]; then
      status=$code
      echo "infiniccl-launch: a rank (pid $pid) exited with status $code; stopping the others" >&2
      # The others may still be finishing on their own; give them a moment before stopping them.
      grace=$((SECONDS + 10))
      while [ $SECONDS -lt $grace ]; do
        alive=0
        for other in "${pids[@]}"; do kill -0 "$other" 2>/dev/null && alive=1; done
        [ $alive -eq 0 ] && break
        sleep 0.2
      done
      stop_all
    fi
  done
  remaining=("${still[@]+"${still[@]}"}")
  if [ ${#remaining[@]} -gt 0 ] && [ $SECONDS -ge $deadline ]; then
    echo "infiniccl-launch: the job ran past ${timeout} s; stopping it" >&2
    stop_all
    [ "$status" -eq 0 ] && status=124
  fi
  [ ${#remaining[@]} -gt 0 ] && sleep 0.1
done
exit "$status"
