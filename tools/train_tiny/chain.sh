#!/bin/bash
# Runs one train_tiny.py stage as a chain of --stop-at segments, so that a long stage survives an
# interruption: run the same line again and it goes on from the last checkpoint (--resume). A resumed
# run ends bit for bit as a straight one (README, "Resumable"), so a chain is the same as one command.
#
#   tools/train_tiny/chain.sh NAME "STOP STOP ... last" ARGS...
#
# NAME: the stage's folder, build/train_tiny/NAME/{model,report,fixtures,checkpoint.pt,log.txt};
# STOPs: the steps to stop after (the checkpoint is copied to ck_STOP.pt there, to read later); "last"
# runs to --steps and exports. ARGS: train_tiny.py's options, --attnlab included, without the paths.
# Every segment runs under nice -n 19; its pid is in NAME/pid (for a pause: kill -STOP / -CONT).
set -u
cd "$(dirname "$0")/../.."
name=$1 stops=$2
shift 2
d=build/train_tiny/$name
mkdir -p "$d"
[ -f "$d/DONE" ] && exit 0
exec 9>"$d/lock"
flock -n 9 || { echo "$name: another chain.sh is running it" >&2; exit 1; }
for s in $stops; do
    [ -f "$d/seg_$s" ] && continue
    while [ -e PAUSE ]; do sleep 60; done  # the lead's pause: no new segment meanwhile
    resume=()
    [ -f "$d/checkpoint.pt" ] && resume=(--resume)
    stop=()
    [ "$s" != last ] && stop=(--stop-at "$s")
    echo "## $(date -u +%FT%TZ) $name: segment to $s ${resume[*]}" >> "$d/log.txt"
    nice -n 19 /usr/bin/python3 tools/train_tiny/train_tiny.py --out "$d/model" --report "$d/report" \
        --checkpoint "$d/checkpoint.pt" --fixture "$d/fixtures/tiny_logits.json" "$@" "${resume[@]}" "${stop[@]}" \
        >> "$d/log.txt" 2>&1 &
    echo $! > "$d/pid"
    wait $! || { echo "## $name: segment to $s failed" >> "$d/log.txt"; exit 1; }
    [ "$s" != last ] && cp "$d/checkpoint.pt" "$d/ck_$s.pt"
    touch "$d/seg_$s"
done
rm -f "$d/pid"
touch "$d/DONE"
