#!/bin/bash
# Issue 31 (BENCHMARKS.md, "Mountain Magic climbs"): N simultaneous Mountain Magic climbs (one
# bot a table, as fast as the server answers) against the release server, journal on (default
# durability), rounds interleaved: climbs of one's own deal (the baseline) and climbs of today's
# mountain. One fresh data directory per run. Run from the repository's root after
# `cargo build --release -p grand-melee-server -p grand-melee-loadtest`; N=2000 ROUNDS="1 2 3 4 5".
set -euo pipefail
SRV=${SRV:-target/release/grand-melee-server}
LT=${LT:-target/release/grand-melee-loadtest}
N=${N:-500}
PORT=7990
for round in ${ROUNDS:-1 2 3}; do
  for which in own day; do
    dir=$(mktemp -d /tmp/mmbench.XXXX)
    $SRV --listen 127.0.0.1:$PORT --data-dir $dir --max-connections-per-ip 0 --max-tables-per-ip 0 \
      --table-creations-per-minute 0 --rate-limit 100000 --rate-burst 100000 --max-tables 5000 \
      > $dir/server.log 2>&1 &
    pid=$!
    for _ in $(seq 100); do (echo > /dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; sleep 0.1; done
    tick=$(getconf CLK_TCK)
    cpu0=$(awk '{print $14+$15}' /proc/$pid/stat)
    extra=""; [ $which = day ] && extra="--day"
    t0=$(date +%s.%N)
    out=$($LT bots --url ws://127.0.0.1:$PORT --game mountain_magic --tables $N --seed $round $extra 2>&1 | tail -3)
    t1=$(date +%s.%N)
    cpu1=$(awk '{print $14+$15}' /proc/$pid/stat)
    hwm=$(grep VmHWM /proc/$pid/status | awk '{print $2}')
    kill $pid; wait $pid 2>/dev/null || true
    moves=$(echo "$out" | grep -oE '[0-9]+ moves' | head -1 | grep -oE '[0-9]+')
    printf "round %s %-3s climbs %s wall %.2f s moves %s server_cpu %.2f s cpu_ms_per_1000_moves %.1f rss_peak_mib %.1f load %s\n" \
      $round $which $N $(echo "$t1 - $t0" | bc) $moves $(echo "($cpu1-$cpu0)/$tick" | bc -l) \
      $(echo "($cpu1-$cpu0)/$tick*1000*1000/$moves" | bc -l) $(echo "$hwm/1024" | bc -l) "$(cut -d' ' -f1 /proc/loadavg)"
    echo "  $out" | tail -2
    rm -rf $dir
  done
done
