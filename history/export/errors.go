package export

import "errors"

// ErrUnknownFormat is returned by Write for a format it does not write.
var ErrUnknownFormat = errors.New("export: unknown format (want jazz, markdown or html)")

// ErrBundle is returned by NewHTML when the web app's export bundle is
// missing from the binary or could not be put into a file safely.
var ErrBundle = errors.New("export: the HTML export's bundle is not usable")
