package history

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
)

func (ix *Index) whole() ([]byte, error) {
	if ix.mem != nil {
		return ix.mem, nil
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.data != nil {
		return ix.data, nil
	}
	b := make([]byte, ix.end)
	if _, err := ix.f.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("read the page index: %w", err)
	}
	ix.data = b
	return b, nil
}

// readIndexFile opens and checks the index at path: trailer and last
// state frame. It does not look at the log.
func readIndexFile(path string) (*Index, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	// The frames a commit reaches never change once written; only the
	// end of the file does, while a commit is appended.
	unlock, err := lockIndexShared(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	defer unlock()
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	size := fi.Size()
	if size < int64(len(indexMagic)+trailerLen) {
		f.Close()
		return nil, fmt.Errorf("%w: too short", ErrIndexDamaged)
	}
	head := make([]byte, len(indexMagic))
	t := make([]byte, trailerLen)
	if _, err := f.ReadAt(head, 0); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.ReadAt(t, size-trailerLen); err != nil {
		f.Close()
		return nil, err
	}
	if string(head) != string(indexMagic) {
		f.Close()
		return nil, fmt.Errorf("%w: not a page index", ErrIndexDamaged)
	}
	if string(t[:4]) != string(trailerMagic) || crc32.Checksum(t[:12], castagnoli) != binary.LittleEndian.Uint32(t[12:]) {
		f.Close()
		return nil, fmt.Errorf("%w: the trailer is damaged", ErrIndexDamaged)
	}
	pos := int64(binary.LittleEndian.Uint64(t[4:]))
	end := size - trailerLen
	if pos < int64(len(indexMagic)) || pos+frameHeadLen+4 > end {
		f.Close()
		return nil, fmt.Errorf("%w: the trailer points outside the file", ErrIndexDamaged)
	}
	b := make([]byte, end-pos)
	if _, err := f.ReadAt(b, pos); err != nil {
		f.Close()
		return nil, err
	}
	kind, payload, err := parseFrame(b)
	if err == nil && kind != frameState {
		err = fmt.Errorf("%w: the trailer does not point at a state", ErrIndexDamaged)
	}
	var st *ixState
	if err == nil {
		st, err = decodeState(payload, pos)
	}
	if err == nil {
		err = st.loadCovs(fileFrames(f, pos))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Index{f: f, end: size, st: st, pos: pos}, nil
}

// readState reads the commit whose state frame is at pos.
func readState(src frameSource, pos int64) (*ixState, error) {
	hd, err := src(link{pos: pos, size: frameHeadLen})
	if err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint32(hd)
	b, err := src(link{pos: pos, size: frameHeadLen + n + 4})
	if err != nil {
		return nil, err
	}
	kind, payload, err := parseFrame(b)
	if err == nil && kind != frameState {
		err = fmt.Errorf("%w: a commit link does not point at a state", ErrIndexDamaged)
	}
	if err != nil {
		return nil, err
	}
	st, err := decodeState(payload, pos)
	if err != nil {
		return nil, err
	}
	if err := st.loadCovs(src); err != nil {
		return nil, err
	}
	return st, nil
}

// back returns the index as of its latest commit that describes at most
// size bytes of the log (a reader that stopped inside a write the index
// has committed extends it from there). Commits are read newest first, so
// this costs one frame per commit since.
func (ix *Index) back(size int64) (*Index, bool) {
	st, pos := ix.st, ix.pos
	for i := 0; st.logSize > size && st.prev > 0 && i < 1<<16; i++ {
		prev, err := readState(ix.frames(), st.prev)
		if err != nil || prev.logSize >= st.logSize {
			return nil, false
		}
		st, pos = prev, st.prev
	}
	if st.logSize > size {
		return nil, false
	}
	return &Index{f: ix.f, mem: ix.mem, end: ix.end, st: st, pos: pos}, true
}

// lastRecordSum is the CRC-32C of log bytes start..end.
func lastRecordSum(f io.ReaderAt, start, end int64) (uint32, error) {
	b := make([]byte, end-start)
	if _, err := f.ReadAt(b, start); err != nil {
		return 0, err
	}
	return crc32.Checksum(b, castagnoli), nil
}
