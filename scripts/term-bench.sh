#!/bin/sh
# term-bench.sh measures the terminal at two sizes of conversation: launch
# to the first full screen (the ready footer) and peak RSS of
# `folio --resume ID` in the fullscreen and the classic view, how long a
# page key takes to change the fullscreen view and folio's RSS before and
# after 50 of them, in tmux at 120×40, and folio log show's time and peak
# RSS (whole, --json and --tail 100) to /dev/null. It first times the
# harness alone (a key echoed by cat, a pane that prints at once), the
# floors under every key time and every ready time.
#
#   scripts/term-bench.sh [SIZES]     (default: 3000 300000)
#
# It builds folio, writes generated logs (folio gen --seed 2) into a
# throwaway data folder and prints one line per measurement. Times are
# polled every 10 ms, so they are good to about that. Run it alone on the
# machine: the figures are the ratios between sizes, from one run.
set -eu
sizes=${*:-3000 300000}
work=$(mktemp -d)
trap 'tmux -S "$work/tmux.sock" kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/folio" ./cmd/folio
home="$work/home"
mkdir -p "$home/conversations"
now_ms() { date +%s%3N; }
pane() { tmux -S "$work/tmux.sock" capture-pane -p -t bench; }

# run_one VIEW_ARGS ID: launch, wait for the ready footer, report.
run_one() {
	args=$1 id=$2
	rm -f "$work/rss"
	start=$(now_ms)
	tmux -S "$work/tmux.sock" -f /dev/null new-session -d -s bench -x 120 -y 40 \
		-e FOLIO_HOME="$home" -e FOLIO_PROVIDER= -e TERM=xterm-256color \
		"/usr/bin/time -f %M -o $work/rss $work/folio $args --resume $id"
	until pane | grep -q "ready"; do sleep 0.01; done
	ready=$(( $(now_ms) - start ))
	lat=""
	case "$args" in *--classic*) ;; *)
		lat=$(page_latency) ;;
	esac
	tmux -S "$work/tmux.sock" send-keys -t bench C-c C-c
	while [ ! -s "$work/rss" ]; do sleep 0.05; done
	tmux -S "$work/tmux.sock" kill-server 2>/dev/null || true
	echo "$args ready_ms=$ready peak_rss_kb=$(cat "$work/rss") $lat"
}

# rss_kb is the resident set of the running folio (not /usr/bin/time's).
rss_kb() {
	pid=$(pgrep -n -f "^$work/folio ") || return 0
	awk '/^VmRSS/ {print $2}' "/proc/$pid/status"
}

# key_times KEY PREFIX presses KEY 50 times, each after the pane settled,
# and prints the median, the p99 (of 50, the slowest) and the slowest time
# from the key to a changed pane, named PREFIX_ms_*.
key_times() {
	ts=""
	for _ in $(seq 50); do
		before=$(pane)
		t0=$(now_ms)
		tmux -S "$work/tmux.sock" send-keys -t bench "$1"
		while [ "$(pane)" = "$before" ]; do
			[ $(( $(now_ms) - t0 )) -gt 2000 ] && break
			sleep 0.005
		done
		ts="$ts $(( $(now_ms) - t0 ))"
	done
	echo "$ts" | tr ' ' '\n' | grep . | sort -n | awk -v p="$2" '{a[NR]=$1} END {printf "%s_ms_median=%d %s_ms_p99=%d %s_ms_max=%d", p, a[int((NR+1)/2)], p, a[int((NR*99+99)/100)], p, a[NR]}'
}

# page_latency presses PageUp 50 times (key_times) and prints folio's RSS
# at the live edge and after the 50 pages.
page_latency() {
	sleep 0.5
	rss_edge=$(rss_kb)
	key_times PageUp page
	sleep 0.5
	rss_paged=$(rss_kb)
	echo " rss_edge_kb=$rss_edge rss_after_50_pages_kb=$rss_paged"
}

# The harness's own share of a key's time: tmux delivering a key to cat and
# the polling seeing it echoed. A page key's time above is folio's work
# plus about this much.
tmux -S "$work/tmux.sock" -f /dev/null new-session -d -s bench -x 120 -y 40 cat
sleep 0.3
echo "harness (cat echoing a key) $(key_times x echo)"
tmux -S "$work/tmux.sock" kill-server 2>/dev/null || true
# And under every ready_ms: tmux starting a pane whose program prints
# "ready" at once.
sleep 0.3
start=$(now_ms)
tmux -S "$work/tmux.sock" -f /dev/null new-session -d -s bench -x 120 -y 40 "echo ready; sleep 5"
until pane | grep -q "ready"; do sleep 0.01; done
echo "harness (a pane that prints ready) ready_ms=$(( $(now_ms) - start ))"
tmux -S "$work/tmux.sock" kill-server 2>/dev/null || true

for n in $sizes; do
	id="20260101-000000-$(printf '%06d' "$n" | tail -c 6)"
	"$work/folio" gen --messages "$n" --seed 2 --out "$home/conversations/$id.jsonl" >/dev/null
	echo "== $n messages"
	run_one "" "$id"
	run_one "--classic" "$id"
	start=$(now_ms)
	/usr/bin/time -f "%M %U %S" -o "$work/rss" "$work/folio" log show "$home/conversations/$id.jsonl" >/dev/null
	ms=$(( $(now_ms) - start )) bytes=$(stat -c %s "$home/conversations/$id.jsonl")
	echo "log-show ms=$ms cpu_s=$(awk '{print $2+$3}' "$work/rss") peak_rss_kb=$(awk '{print $1}' "$work/rss") bytes=$bytes MB_per_s=$(( bytes / 1000 / (ms > 0 ? ms : 1) ))"
	start=$(now_ms)
	/usr/bin/time -f %M -o "$work/rss" "$work/folio" log show --json "$home/conversations/$id.jsonl" >/dev/null
	echo "log-show-json ms=$(( $(now_ms) - start )) peak_rss_kb=$(cat "$work/rss")"
	start=$(now_ms)
	"$work/folio" log show --tail 100 "$home/conversations/$id.jsonl" >/dev/null
	echo "log-show-tail100 ms=$(( $(now_ms) - start ))"
done
