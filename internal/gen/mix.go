package gen

import (
	"math/rand/v2"
	"strconv"
	"strings"
)

// Mix returns log (a version 3 log as Write writes it) with records mixed
// in at places chosen by seed that a writer rarely or never writes: UI
// snapshots re-listing earlier entries, provisional tails, batches that
// repeat an ID (which readers reject), branches with records of their own,
// head switches, lines of an unknown type and a broken line. For an even
// seed the log ends in a provisional tail of three entries, as a writer
// killed mid-stream leaves it. Readers compared against each other (a
// light read and a whole one, say) meet every rule of the format this way.
func Mix(log []byte, seed uint64) []byte {
	rnd := rand.New(rand.NewPCG(seed, 99))
	src := strings.Split(strings.TrimSuffix(string(log), "\n"), "\n")
	out := []string{src[0]}
	var seen []string // the entries arrays' contents of the ui-append lines so far
	branches := 0
	const at = `"at":"2026-03-04T05:06:08.000Z"`
	firstID := func(s string) string {
		i := strings.Index(s, `"id":"`) + 6
		return s[i : i+strings.IndexByte(s[i:], '"')]
	}
	renamed := func(s, suffix string) string {
		id := firstID(s)
		return strings.Replace(s, `"id":"`+id+`"`, `"id":"`+id+suffix+`"`, 1)
	}
	for _, l := range src[1:] {
		out = append(out, l)
		i := strings.Index(l, `"entries":[`)
		if !strings.HasPrefix(l, `{"type":"ui-append"`) || i < 0 {
			continue
		}
		body := strings.TrimSuffix(l[i+len(`"entries":[`):], "]}")
		seen = append(seen, body)
		switch rnd.IntN(14) {
		case 0: // a batch repeating an ID: rejected, its IDs reserved
			out = append(out, `{"type":"ui-append",`+at+`,"entries":[`+renamed(body, "-new")+","+body+`]}`)
		case 1: // a provisional tail, superseded by the next UI record
			out = append(out, `{"type":"ui-open",`+at+`,"entries":[`+renamed(body, "-open")+`]}`)
		case 2: // a snapshot re-listing some of what came before (at most 50)
			k := max(rnd.IntN(len(seen)), len(seen)-50)
			out = append(out, `{"type":"ui-transcript",`+at+`,"entries":[`+strings.Join(seen[k:], ",")+`]}`)
		case 3: // a branch with a record of its own, sometimes made the head
			branches++
			b := "b" + strconv.Itoa(branches)
			out = append(out, `{"type":"branch",`+at+`,"branch":"`+b+`","parent":"main","afterEntry":"`+firstID(body)+`","afterMessage":0}`)
			out = append(out, `{"type":"on-branch",`+at+`,"branch":"`+b+`","record":{"type":"ui-append",`+at+`,"entries":[`+renamed(body, "-"+b)+`]}}`)
			if rnd.IntN(2) == 0 {
				out = append(out, `{"type":"head",`+at+`,"branch":"`+b+`"}`)
			}
		case 4:
			out = append(out, `{"type":"head",`+at+`,"branch":"main"}`)
		case 5:
			out = append(out, `{"type":"later-kind",`+at+`}`, `{"type":"ui-append","entries":[{"id":`)
		}
	}
	if seed%2 == 0 && len(seen) >= 3 {
		var tail []string
		for i, b := range seen[len(seen)-3:] {
			tail = append(tail, strings.Replace(b, `"id":"`, `"id":"open`+strconv.Itoa(i)+`-`, 1))
		}
		out = append(out, `{"type":"ui-open",`+at+`,"entries":[`+strings.Join(tail, ",")+`]}`)
	}
	return []byte(strings.Join(out, "\n") + "\n")
}
