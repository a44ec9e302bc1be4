package tools

import (
	"strconv"
	"strings"
)

// diffContext is how many unchanged lines a hunk shows around a change.
const diffContext = 3

// maxDiffBytes bounds the diff text a presentation carries.
const maxDiffBytes = 32 << 10

// maxPreviewBytes bounds a previewed command line; maxPreviewFile is the
// largest file a preview reads to show a change against it.
const (
	maxPreviewBytes = 4 << 10
	maxPreviewFile  = 1 << 20
)

// unifiedDiff returns a unified diff of old → new for path, with the number
// of added and removed lines. It finds the changed region by trimming the
// common leading and trailing lines, which is exact for the single edits
// these tools make and never worse than "all of it changed" otherwise; it
// needs no quadratic search, so a large file cannot stall a tool.
func unifiedDiff(path, old, new string) (diff string, added, removed int) {
	if old == new {
		return "", 0, 0
	}
	a, b := splitLines(old), splitLines(new)
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	start := max(0, pre-diffContext)
	endA := min(len(a), len(a)-suf+diffContext)
	endB := min(len(b), len(b)-suf+diffContext)

	var sb strings.Builder
	sb.WriteString("--- a/" + path + "\n+++ b/" + path + "\n")
	sb.WriteString("@@ -" + hunkRange(start, endA-start) + " +" + hunkRange(start, endB-start) + " @@\n")
	for _, l := range a[start:pre] {
		writeLine(&sb, ' ', l)
	}
	for _, l := range a[pre : len(a)-suf] {
		writeLine(&sb, '-', l)
		removed++
	}
	for _, l := range b[pre : len(b)-suf] {
		writeLine(&sb, '+', l)
		added++
	}
	for _, l := range a[len(a)-suf : endA] {
		writeLine(&sb, ' ', l)
	}
	return sb.String(), added, removed
}

func hunkRange(start, n int) string {
	if n == 0 {
		return strconv.Itoa(start) + ",0"
	}
	return strconv.Itoa(start+1) + "," + strconv.Itoa(n)
}

func writeLine(sb *strings.Builder, mark byte, l string) {
	sb.WriteByte(mark)
	if strings.HasSuffix(l, "\n") {
		sb.WriteString(l)
		return
	}
	sb.WriteString(l)
	sb.WriteString("\n\\ No newline at end of file\n")
}

// splitLines splits s after each newline, keeping the newlines; a last
// line without one is its own element.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
