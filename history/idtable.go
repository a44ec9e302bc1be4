package history

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"slices"
)

// The ID table. A page index written in one pass over its log (a rebuild)
// also holds an ID table: a hash table of the IDs of main's first
// settled entries (ixState.tableN), each with where its entries frame is.
// A writer or reader that resumes after more records were appended tells
// from it that their IDs are new without reading every entry's ID back
// (resumeLight), and IndexDoc.Find finds an entry by reading one frame.
// A fingerprint match is only a "maybe": the frame it points at says.
//
// The table grows in steps, so that the writer of a long live log holds
// only the IDs of the entries since the last step: it is a list of
// segments (ixState.tables), each a table frame ('T') of the IDs of the
// entries after the previous segment's, up to its own count. The index
// writer adds a segment once tableStep entries follow the last one, and
// merges the newest two while the newer covers as many entries as the
// older (as a binary counter carries), so a log of n entries has about
// log2(n/tableStep) segments and an ID costs a bucket read in each.
//
// A segment's payload is u32 bucket count (a power of two) and the buckets, each
// tableSlots slots of u32 fingerprint (0 empty) and u32 entries frame
// position, then a u32 CRC-32C of the bucket's index and slots, so one
// bucket can be read and checked on its own. An ID goes in the first
// bucket from its hash's, in order, with an empty slot.

const (
	tableSlots     = 15
	tableBucketLen = tableSlots*8 + 4
)

// idHash is the table's hash of an ID: FNV-1a, fixed across processes.
func idHash(id string) (bucket uint64, print uint32) {
	h := fnv.New64a()
	h.Write([]byte(id))
	v := h.Sum64()
	print = uint32(v >> 32)
	if print == 0 {
		print = 1
	}
	return v, print
}

// appendTableFrame appends to dst a table frame ('T') holding ids,
// entry i in the entries frame at frames[i] (positions below 4 GiB): what
// appendFrame appends for the payload, which is encoded straight into dst.
func appendTableFrame(dst []byte, ids []string, frames []uint32) []byte {
	w := bytes.NewBuffer(slices.Grow(dst, tableFrameLen(len(ids))))
	writeTableFrame(w, ids, frames)
	return w.Bytes()
}

// tableFrameLen is the size of a table frame of n IDs.
func tableFrameLen(n int) int { return frameHeadLen + idTableLen(n) + 4 }

// writeTableFrame writes the frame appendTableFrame appends, holding a
// bucket of it at a time. It stops at w's first error.
func writeTableFrame(w io.Writer, ids []string, frames []uint32) error {
	head := binary.LittleEndian.AppendUint32(make([]byte, 0, frameHeadLen), uint32(idTableLen(len(ids))))
	head = append(head, frameTable)
	if _, err := w.Write(head); err != nil {
		return err
	}
	sum := crc32.Checksum(head[4:], castagnoli)
	err := emitIDTable(ids, frames, func(p []byte) error {
		sum = crc32.Update(sum, castagnoli, p)
		_, err := w.Write(p)
		return err
	})
	if err != nil {
		return err
	}
	_, err = w.Write(binary.LittleEndian.AppendUint32(nil, sum))
	return err
}

// idTableBuckets is how many buckets a table of n IDs has.
func idTableBuckets(n int) int {
	b := 1
	for b*tableSlots < 2*n {
		b *= 2
	}
	return b
}

// idTableLen is the size of the payload of a table of n IDs.
func idTableLen(n int) int { return 4 + idTableBuckets(n)*tableBucketLen }

// emitIDTable hands a table payload to emit in parts
// (the count, then a bucket at a time), so that a table can be written
// out without the whole payload ever in memory; the parts are only good
// until emit returns. It stops at emit's first error.
func emitIDTable(ids []string, frames []uint32, emit func([]byte) error) error {
	n := idTableBuckets(len(ids))
	slots := make([]uint32, 2*n*tableSlots)
	for i, id := range ids {
		h, p := idHash(id)
		for b := h & uint64(n-1); ; b = (b + 1) & uint64(n-1) {
			free := -1
			for j := range tableSlots {
				if slots[2*(int(b)*tableSlots+j)] == 0 {
					free = 2 * (int(b)*tableSlots + j)
					break
				}
			}
			if free >= 0 {
				slots[free], slots[free+1] = p, frames[i]
				break
			}
		}
	}
	buf := binary.LittleEndian.AppendUint32(make([]byte, 0, 4+tableBucketLen), uint32(n))
	if err := emit(buf); err != nil {
		return err
	}
	for b := range n {
		buf = binary.LittleEndian.AppendUint32(buf[:0], uint32(b))
		for _, v := range slots[2*b*tableSlots : 2*(b+1)*tableSlots] {
			buf = binary.LittleEndian.AppendUint32(buf, v)
		}
		sum := crc32.Checksum(buf, castagnoli)
		buf = binary.LittleEndian.AppendUint32(append(buf[:0], buf[4:]...), sum)
		if err := emit(buf); err != nil {
			return err
		}
	}
	return nil
}

// tableSeg is a segment of the ID table: its frame, and how many of
// main's first entries the segments up to this one hold (the segment
// holds those after the previous segment's n).
type tableSeg struct {
	at link
	n  int
}

// idTable reads the segments of an ID table.
type idTable struct{ segs []*idSeg }

// openIDTable opens the table whose segments are segs, in an index file of
// size end held by src.
func openIDTable(src io.ReaderAt, end int64, segs []tableSeg) (*idTable, error) {
	if len(segs) == 0 {
		return nil, fmt.Errorf("%w: no ID table", ErrIndexDamaged)
	}
	t := &idTable{segs: make([]*idSeg, len(segs))}
	for i, sg := range segs {
		s, err := openIDSeg(src, end, sg.at)
		if err != nil {
			return nil, err
		}
		t.segs[i] = s
	}
	return t, nil
}

// maybe reports whether id may be in the table; false is certain.
func (t *idTable) maybe(id string) (bool, error) {
	for _, s := range t.segs {
		if ok, err := s.maybe(id); ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// lookup returns the entries frames of the entries whose fingerprint is
// id's, over every segment: id is in the table only if it is in one of
// them.
func (t *idTable) lookup(id string) ([]int64, error) {
	var out []int64
	for _, s := range t.segs {
		frames, err := s.lookup(id)
		if err != nil {
			return nil, err
		}
		out = append(out, frames...)
	}
	return out, nil
}

// idSeg reads buckets of a table frame at a link.
type idSeg struct {
	src     io.ReaderAt
	payload int64 // where the payload starts
	n       uint64
}

// openIDSeg opens the table frame l points at, in an index file of size
// end held by src.
func openIDSeg(src io.ReaderAt, end int64, l link) (*idSeg, error) {
	if l.pos < int64(len(indexMagic)) || l.pos+int64(l.size) > end || l.size < frameHeadLen+4+4 {
		return nil, fmt.Errorf("%w: an ID table link points outside the file", ErrIndexDamaged)
	}
	hd := make([]byte, frameHeadLen+4)
	if _, err := src.ReadAt(hd, l.pos); err != nil {
		return nil, fmt.Errorf("read the page index: %w", err)
	}
	n := binary.LittleEndian.Uint32(hd[frameHeadLen:])
	if hd[4] != frameTable || uint64(binary.LittleEndian.Uint32(hd)) != 4+uint64(n)*tableBucketLen ||
		uint64(l.size) != frameHeadLen+4+4+uint64(n)*tableBucketLen || n == 0 || n&(n-1) != 0 {
		return nil, fmt.Errorf("%w: an ID table's size is impossible", ErrIndexDamaged)
	}
	return &idSeg{src: src, payload: l.pos + frameHeadLen, n: uint64(n)}, nil
}

// maybe reports whether id may be in the segment; false is certain.
func (t *idSeg) maybe(id string) (bool, error) {
	frames, err := t.lookup(id)
	return len(frames) > 0, err
}

// lookup returns the entries frames of the entries whose fingerprint is
// id's: id is in the table only if it is in one of them.
func (t *idSeg) lookup(id string) ([]int64, error) {
	h, p := idHash(id)
	var out []int64
	for i, b := uint64(0), h&(t.n-1); i < t.n; i, b = i+1, (b+1)&(t.n-1) {
		slots, err := t.bucket(b)
		if err != nil {
			return nil, err
		}
		for s := 0; s < len(slots); s += 2 {
			switch slots[s] {
			case p:
				out = append(out, int64(slots[s+1]))
			case 0:
				return out, nil
			}
		}
	}
	return out, nil
}

// bucket reads and checks bucket b: its fingerprints and frame positions,
// interleaved.
func (t *idSeg) bucket(b uint64) ([2 * tableSlots]uint32, error) {
	var out [2 * tableSlots]uint32
	buf := make([]byte, tableBucketLen)
	if _, err := t.src.ReadAt(buf, t.payload+4+int64(b)*tableBucketLen); err != nil {
		return out, fmt.Errorf("read the page index: %w", err)
	}
	var idx [4]byte
	binary.LittleEndian.PutUint32(idx[:], uint32(b))
	sum := crc32.Update(crc32.Checksum(idx[:], castagnoli), castagnoli, buf[:tableSlots*8])
	if sum != binary.LittleEndian.Uint32(buf[tableSlots*8:]) {
		return out, fmt.Errorf("%w: an ID table bucket fails its checksum", ErrIndexDamaged)
	}
	for s := range out {
		out[s] = binary.LittleEndian.Uint32(buf[s*4:])
	}
	return out, nil
}
