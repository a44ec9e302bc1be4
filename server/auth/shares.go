package auth

import "time"

// Share is a read-only link to one conversation (server/shares.go), as
// its owner lists it: never with its token.
type Share struct {
	ID           string    `json:"id"`
	Conversation string    `json:"conversation"`
	CreatedBy    string    `json:"createdBy"`
	CreatedAt    time.Time `json:"createdAt"`
}

// ShareStore keeps share links by the SHA-256 (hex) of their token.
type ShareStore interface {
	AddShare(key string, s Share) error
	// ResolveShare returns the conversation of the link under key; ok is
	// false for none.
	ResolveShare(key string) (conversation string, ok bool, err error)
	ListShares(conversation string) ([]Share, error)
	// RevokeShare removes the link id of conversation; false if none.
	RevokeShare(conversation, id string) (bool, error)
}
