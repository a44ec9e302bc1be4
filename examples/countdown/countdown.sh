#!/bin/sh
# countdown: an example folio plugin in plain POSIX sh.
#
# The manifest says "persistent": true, so folio starts this script once and
# writes one JSON-RPC 2.0 request per line on stdin for every call:
#   {"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"countdown",
#    "arguments":{"n":3},"artifact":{"ref":"…","path":"…"}}}
# For each, the script prints notifications naming the call ("call":7) and
# then the result with the same id, one JSON object per line, on stdout.
# It serves calls one after another; folio queues the rest in the pipe. A
# "tools/cancel" line tells it folio gave up on a call; this script has no
# work worth stopping, so it skips such lines. When folio closes stdin, the
# loop ends and so does the script. A real plugin would use a JSON library;
# sed is enough for this shape.
set -eu

while IFS= read -r request; do
	case $request in
	*'"method":"tools/call"'*) ;;
	*) continue ;;
	esac
	id=$(printf '%s' "$request" | sed -n 's/^{"jsonrpc":"2.0","id":\([0-9]*\),.*/\1/p')
	n=$(printf '%s' "$request" | sed -n 's/.*"n":\([0-9]*\).*/\1/p')
	delay=$(printf '%s' "$request" | sed -n 's/.*"delay":\([0-9]*\).*/\1/p')
	ref=$(printf '%s' "$request" | sed -n 's/.*"ref":"\([0-9a-f]*\)".*/\1/p')
	log=$(printf '%s' "$request" | sed -n 's/.*"path":"\([^"]*\)".*/\1/p')
	: "${delay:=0}"

	i=$n
	while [ "$i" -gt 0 ]; do
		# Replace the primary item's current value: one bounded payload.
		printf '{"jsonrpc":"2.0","method":"presentation/replace","params":{"call":%s,"schema":"countdown.progress","version":1,"payload":{"remaining":%d,"total":%d}}}\n' "$id" "$i" "$n"
		printf 'tick %d\n' "$i" >>"$log"
		[ "$delay" -gt 0 ] && sleep "$delay"
		i=$((i - 1))
	done

	# Large output goes to the artifact; the item then refers to it.
	size=$(wc -c <"$log" | tr -d ' ')
	printf '{"jsonrpc":"2.0","method":"presentation/replaceArtifact","params":{"call":%s,"schema":"countdown.log","version":1,"ref":"%s","contentType":"text/plain","committedBytes":%d,"final":true,"available":true,"data":{"lines":%d}}}\n' "$id" "$ref" "$size" "$n"

	# A keyed supplemental with its own revisions.
	printf '{"jsonrpc":"2.0","method":"presentation/replace","params":{"call":%s,"item":"summary","schema":"countdown.progress","version":1,"payload":{"remaining":0,"total":%d}}}\n' "$id" "$n"

	# The result comes last.
	printf '{"jsonrpc":"2.0","id":%s,"result":{"content":"counted down from %d","summary":"countdown %d"}}\n' "$id" "$n" "$n"
done
