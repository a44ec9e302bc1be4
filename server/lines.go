package server

import (
	"bufio"
	"bytes"
	"io"
)

// maxLogLine bounds one log line for the scans below; a longer one is
// skipped.
const maxLogLine = 64 << 20

// The listing's metadata and the artifact lookup look for a few members in
// raw lines without applying the log's rules; documents are read only by
// package history's Scanner (livestate.go).

// scanLines calls fn with each complete, non-blank line of r (without its
// newline) and the offset just past it. A torn last line is left alone; a
// line over maxLogLine is skipped.
func scanLines(r io.Reader, fn func(line []byte, end int64) bool) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var off int64
	for {
		line, n, err := readLine(br)
		if err == io.EOF {
			return nil // whatever is left is torn
		}
		if err != nil {
			return err
		}
		off += n
		if t := bytes.TrimSpace(line); len(t) > 0 && !fn(t, off) {
			return nil
		}
	}
}

// readLine reads one newline-terminated line and how many bytes it took. A
// line over maxLogLine comes back nil. io.EOF means no complete line was
// left.
func readLine(br *bufio.Reader) ([]byte, int64, error) {
	line, err := br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return line, int64(len(line)), err
	}
	buf := append([]byte(nil), line...)
	n := int64(len(line))
	for {
		line, err = br.ReadSlice('\n')
		n += int64(len(line))
		if buf != nil && len(buf)+len(line) <= maxLogLine {
			buf = append(buf, line...)
		} else {
			buf = nil
		}
		if err != bufio.ErrBufferFull {
			return buf, n, err
		}
	}
}
