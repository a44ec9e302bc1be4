package history

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
)

// ImportResult says what Import did with one log.
type ImportResult struct {
	// Created: the store had no log and now holds data; Appended: it held
	// a prefix of data and now holds all of it; neither: it already held
	// data exactly.
	Created, Appended bool
	// Records counts the records written; Receipts the command receipts.
	Records, Receipts int
	// Torn is the length of an unterminated last line left out (a write
	// that was in progress; readers ignore it too).
	Torn int
}

// Import copies a log's exact bytes into s as conversation id, under its
// writer lease, so that running it again changes nothing: a log the store
// lacks is created, one the store holds a prefix of (the source grew since
// the last import) gets the rest appended, an identical one is left alone,
// and any other is refused with ErrImportDiffers. commands, the log's
// receipts sidecar (nil for none), is copied when the store has no
// receipts for id yet. data must read as a log (a header folio accepts);
// records the reader rejects are copied as they are, as the file holds
// them.
func Import(s Store, id string, data, commands []byte) (ImportResult, error) {
	var res ImportResult
	if i := bytes.LastIndexByte(data, '\n'); i+1 < len(data) {
		res.Torn = len(data) - (i + 1)
		data = data[:i+1]
	}
	if _, err := parseNamed(id, id, data); err != nil {
		return res, err
	}
	m, err := s.Open(id)
	if err != nil {
		return res, err
	}
	defer m.Close()
	have, err := m.Read()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := m.Replace(data); err != nil {
			return res, err
		}
		res.Created, res.Records = true, bytes.Count(data, []byte{'\n'})
	case err != nil:
		return res, err
	case bytes.Equal(have, data):
	case bytes.HasPrefix(data, have):
		rest := data[len(have):]
		if err := m.Append(rest); err != nil {
			return res, err
		}
		res.Appended, res.Records = true, bytes.Count(rest, []byte{'\n'})
	default:
		return res, fmt.Errorf("%s: %w (%d bytes there, %d here)", m.Name(), ErrImportDiffers, len(have), len(data))
	}
	if len(commands) > 0 {
		old, err := m.Commands()
		if err != nil {
			return res, err
		}
		if len(old) == 0 {
			var werr error
			splitLines(commands, func(line []byte) {
				if werr == nil && len(bytes.TrimSpace(line)) > 0 {
					werr = m.RecordCommand(line)
					res.Receipts++
				}
			})
			if werr != nil {
				return res, fmt.Errorf("command receipts: %w", werr)
			}
		}
	}
	if c, err := parseNamed(m.Name(), id, data); err == nil {
		m.Noted(summaryOfConv(c))
	}
	return res, nil
}
