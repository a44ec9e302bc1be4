package export

import "errors"

// ErrUnknownFormat is returned by Write for a format it does not write.
var ErrUnknownFormat = errors.New("export: unknown format (want jazz or markdown)")
