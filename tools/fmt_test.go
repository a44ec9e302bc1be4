package tools

import "fmt"

// fmtSscanf reads the old range of a hunk header "@@ -s,n +s,n @@".
func fmtSscanf(header string, start, n *int) (int, error) {
	return fmt.Sscanf(header, "@@ -%d,%d", start, n)
}
