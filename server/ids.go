package server

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
)

// validConversationID keeps every path the server builds inside the data
// folder: 1–128 of A-Z a-z 0-9 _ - ., not starting with a dot.
func validConversationID(id string) error {
	if len(id) == 0 || len(id) > 128 || id[0] == '.' {
		return fmt.Errorf("%w: conversation id %q must be 1-128 characters and not start with '.'", ErrInvalidID, clip(id))
	}
	for i := 0; i < len(id); i++ {
		if !idByte(id[i], false) {
			return fmt.Errorf("%w: conversation id %q has %q at byte %d", ErrInvalidID, clip(id), id[i], i)
		}
	}
	return nil
}

// validCommandID accepts 1–128 of A-Z a-z 0-9 _ - . :.
func validCommandID(id string) error {
	if len(id) == 0 || len(id) > 128 {
		return fmt.Errorf("%w: commandId must be 1-128 characters, got %d", ErrInvalidID, len(id))
	}
	for i := 0; i < len(id); i++ {
		if !idByte(id[i], true) {
			return fmt.Errorf("%w: commandId has %q at byte %d", ErrInvalidID, id[i], i)
		}
	}
	return nil
}

func idByte(c byte, colon bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.':
		return true
	case c == ':':
		return colon
	}
	return false
}

// clip bounds a client string quoted back in an error message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

func randomID(prefix string, n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}
