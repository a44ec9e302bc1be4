// Package mcpschema is the shape of an MCP tool call's presentation: the
// folio.mcp.progress value package mcp publishes as a call's primary item
// and every view decodes, and the folio.mcp.content artifacts that hold its
// larger blocks. It is a package of its own so that a view can read the
// value without linking the MCP client. It holds only types and constants.
package mcpschema

// Presentation schemas, version 1.
const (
	// Progress is an MCP call's primary item, a Call. While the call runs,
	// each progress notification replaces the value; the final value carries
	// the result's content blocks.
	Progress = "folio.mcp.progress"
	// Content is the schema of the artifact checkpoints that hold an MCP
	// call's images, audio, blobs and long text (supplemental items a
	// Block names).
	Content = "folio.mcp.content"
)

// A Call's Status.
const (
	StatusRunning = "running"
	StatusOK      = "ok"
	StatusError   = "error"
)

// Call is the folio.mcp.progress value:
//
//	{"server": "demo", "tool": "progress", "status": "running" | "ok" | "error",
//	 "progress": 2, "total": 5, "message": "step 2 of 5", "updates": 2,
//	 "content": [block...], "omitted": 0}
type Call struct {
	Server   string  `json:"server"`
	Tool     string  `json:"tool"`
	Status   string  `json:"status"`
	Progress float64 `json:"progress,omitzero"`
	Total    float64 `json:"total,omitzero"`
	Message  string  `json:"message,omitzero"`
	Updates  int     `json:"updates,omitzero"` // progress notifications so far
	Content  []Block `json:"content,omitzero"`
	Omitted  int     `json:"omitted,omitzero"` // content blocks not listed
}

// Block is one content block of a result:
//
//	{"type": "text", "text": "…", "bytes": N, "truncated": true, "item": "result", "ref": "…"}
//	{"type": "image" | "audio" | "resource", "contentType": "image/png", "bytes": N, "item": "image-1", "ref": "…"}
//	{"type": "resource_link", "uri": "…", "name": "…", "title": "…", "contentType": "…"}
//
// A block with Item has its bytes in that supplemental item's artifact
// (Ref); a truncated text block shows only the head.
type Block struct {
	Type        string `json:"type"`
	Text        string `json:"text,omitzero"`
	Bytes       int64  `json:"bytes,omitzero"`
	Truncated   bool   `json:"truncated,omitzero"`
	Item        string `json:"item,omitzero"`
	Ref         string `json:"ref,omitzero"`
	ContentType string `json:"contentType,omitzero"`
	URI         string `json:"uri,omitzero"`
	Name        string `json:"name,omitzero"`
	Title       string `json:"title,omitzero"`
}
