package pager

import "errors"

// ErrReleased is returned by Snapshot.Page after the snapshot's last
// reference was released and its file deleted.
var ErrReleased = errors.New("snapshot released")

// ErrAnchorNotFound is returned by Snapshot.Page when the anchor names an
// entry that the snapshot did not capture.
var ErrAnchorNotFound = errors.New("anchor entry not in snapshot")

// ErrBadDirection is returned by Snapshot.Page for a direction other than
// before, after or around.
var ErrBadDirection = errors.New("direction must be before, after or around")

// ErrBadBudget is returned by Snapshot.Page for a budget below MinBudget or
// above MaxBudget.
var ErrBadBudget = errors.New("budget out of range")

// ErrBadItem is returned by Build when an item has no ID or no bytes, or an
// ID repeats.
var ErrBadItem = errors.New("bad snapshot item")
