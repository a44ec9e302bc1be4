package pager

import "strconv"

// The page frame: how a display group is written on a page, and what a
// window of groups costs in bytes. A page is its groups' JSON objects
// joined by commas,
//
//	{"index":N,"entries":[e,e,...],"bytes":M}
//
// where each entry e is its stored JSON, byte for byte, and M is the
// group's whole size, from { to }. M is written right-aligned in a field
// of sizeWidth characters (JSON allows the spaces before a number), so a
// group's size is a sum of what history records of its entries (their
// stored bytes and how many there are) and of its index's digits. That
// makes the size of any run of groups, the whole document's included, a
// difference of two positions the page index holds, with no pass over
// the groups in between (spanBytes). Were M written in as many digits as
// it needs, a run's size would depend on each group's digits, which only
// a pass over every group (or page bytes stored in the index) could give.
//
// A display group is one turn of history's page index (history.Ref.Turn):
// a user entry alone, or the entries up to the next user entry.

// sizeWidth is the characters a group's "bytes" figure takes: 15 digits,
// a petabyte, more than any log holds, and every such number is one a
// JavaScript number holds exactly.
const sizeWidth = 15

const (
	groupHead = len(`{"index":`) + len(`,"entries":[`) // before and after the index's digits
	groupTail = len(`],"bytes":`) + sizeWidth + len(`}`)
	// groupFixed is a group's bytes that are neither its index's digits,
	// its entries nor the commas between them.
	groupFixed = groupHead + groupTail
)

// groupOpen appends the start of display group index's JSON on a page:
// {"index":N,"entries":[ — its entries follow, joined by commas, then
// groupClose.
func groupOpen(dst []byte, index int) []byte {
	dst = append(dst, `{"index":`...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	return append(dst, `,"entries":[`...)
}

// groupClose appends the end of a display group's JSON: ],"bytes":M}
// where M is the group's whole size (groupBytes), padded to sizeWidth.
func groupClose(dst []byte, index int, entriesLen int64, n int) []byte {
	dst = append(dst, `],"bytes":`...)
	num := strconv.AppendInt(make([]byte, 0, 20), groupBytes(index, entriesLen, n), 10)
	for range sizeWidth - len(num) {
		dst = append(dst, ' ')
	}
	dst = append(dst, num...)
	return append(dst, '}')
}

// groupBytes is the size of display group index's JSON on a page when its
// n entries' stored JSON totals entriesLen bytes. A client budgets pages
// with it.
func groupBytes(index int, entriesLen int64, n int) int64 {
	return int64(groupFixed+digits(int64(index))) + entriesLen + int64(max(n-1, 0))
}

// spanBytes is the page bytes of display groups first..last, with the
// commas between them, when their n entries' stored JSON totals
// entriesLen bytes: the sum of their groupBytes and one per comma.
func spanBytes(first, last int, entriesLen int64, n int) int64 {
	k := int64(last - first + 1)
	return k*int64(groupFixed) + digitsUpTo(int64(last)+1) - digitsUpTo(int64(first)) + entriesLen + int64(n) - k + (k - 1)
}

// digits is the number of decimal digits of v ≥ 0.
func digits(v int64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

// digitsUpTo is the decimal digits of the numbers 0..n-1 written out.
func digitsUpTo(n int64) int64 {
	var sum int64
	for lo, d := int64(0), int64(1); lo < n; d++ {
		hi := max(lo*10, 10) // the first number with d+1 digits
		sum += d * (min(n, hi) - lo)
		lo = hi
	}
	return sum
}
