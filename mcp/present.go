package mcp

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foliodev/folio/mcp/mcpschema"
	"github.com/foliodev/folio/toolview"
)

// Bounds of what one value shows.
const (
	maxMessage   = 512     // a progress message
	maxBlocks    = 64      // content blocks listed; the rest are counted
	maxArtifacts = 16      // binary blocks kept as artifacts
	headBytes    = 2 << 10 // the head of a text that went to an artifact
	maxLinkField = 1 << 10 // a resource link's uri, name or title
)

// presenter publishes one call's folio.mcp.progress value.
type presenter struct {
	inv   *toolview.Invocation
	bound int

	mu   sync.Mutex
	done bool
	pl   mcpschema.Call
}

func newPresenter(inv *toolview.Invocation, server, tool string, bound int) *presenter {
	if lim := int(inv.PayloadLimit()) / 2; bound > lim {
		bound = lim
	}
	return &presenter{inv: inv, bound: bound, pl: mcpschema.Call{Server: server, Tool: tool, Status: mcpschema.StatusRunning}}
}

// publish replaces the primary value; the caller holds mu. Refusals are
// counted by the host and shown as the invocation's diagnostics.
func (p *presenter) publish() {
	b, err := json.Marshal(p.pl)
	if err != nil {
		return
	}
	_, _ = p.inv.Presentation().Replace(toolview.Payload{Schema: mcpschema.Progress, Version: 1, Data: b})
}

func (p *presenter) running() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.publish()
}

// progress applies one notification. The host's cadence coalesces bursts;
// notifications after the result are ignored.
func (p *presenter) progress(progress, total float64, msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	p.pl.Progress, p.pl.Total, p.pl.Message = progress, total, clipLine(msg, maxMessage)
	p.pl.Updates++
	p.publish()
}

// finish publishes a final value without result content.
func (p *presenter) finish(status, msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = true
	p.pl.Status, p.pl.Message = status, msg
	p.publish()
}

// result publishes the final value from the result's content blocks and
// returns what the model reads.
func (p *presenter) result(res *sdk.CallToolResult, name string) (toolview.Result, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = true
	p.pl.Status = mcpschema.StatusOK
	if res.IsError {
		p.pl.Status = mcpschema.StatusError
	}
	var texts []string
	total := 0
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			texts = append(texts, t.Text)
			total += len(t.Text)
		}
	}
	// Past the bound the whole text goes to one artifact; the value and
	// the model get its head.
	var long *mcpschema.Block
	if total > p.bound {
		long = p.artifact("result", "text/plain; charset=utf-8", []byte(strings.Join(texts, "\n")))
	}
	var model []string
	modelLeft := p.bound
	binaries := 0
	add := func(b mcpschema.Block) {
		if len(p.pl.Content) >= maxBlocks {
			p.pl.Omitted++
			return
		}
		p.pl.Content = append(p.pl.Content, b)
	}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			if long == nil {
				add(mcpschema.Block{Type: "text", Text: c.Text})
				model = append(model, c.Text)
				continue
			}
			head, _ := clip(c.Text, headBytes)
			b := *long
			b.Text, b.Truncated = head, len(head) < len(c.Text)
			add(b)
			mh, cut := clip(c.Text, max(modelLeft, 0))
			modelLeft -= len(mh)
			model = append(model, mh)
			if cut {
				model = append(model, fmt.Sprintf("[the result has %d bytes in all; the rest is kept as artifact %s]", total, long.Ref))
				modelLeft = 0
			}
		case *sdk.ImageContent, *sdk.AudioContent:
			kind, mime, data := "image", "", []byte(nil)
			if im, ok := c.(*sdk.ImageContent); ok {
				mime, data = im.MIMEType, im.Data
			} else {
				au := c.(*sdk.AudioContent)
				kind, mime, data = "audio", au.MIMEType, au.Data
			}
			b := mcpschema.Block{Type: kind, ContentType: clipLine(mime, 100), Bytes: int64(len(data))}
			if binaries < maxArtifacts {
				binaries++
				if a := p.artifact(fmt.Sprintf("%s-%d", kind, binaries), mime, data); a != nil {
					b.Item, b.Ref = a.Item, a.Ref
				}
			}
			add(b)
			model = append(model, fmt.Sprintf("[%s %s, %d bytes%s]", kind, b.ContentType, len(data), refNote(b.Ref)))
		case *sdk.ResourceLink:
			b := mcpschema.Block{Type: "resource_link", URI: clipLine(c.URI, maxLinkField), Name: clipLine(c.Name, maxLinkField),
				Title: clipLine(c.Title, maxLinkField), ContentType: clipLine(c.MIMEType, 100)}
			add(b)
			model = append(model, fmt.Sprintf("[resource %s: %s]", c.Name, c.URI))
		case *sdk.EmbeddedResource:
			r := c.Resource
			if r == nil {
				continue
			}
			b := mcpschema.Block{Type: "resource", URI: clipLine(r.URI, maxLinkField), ContentType: clipLine(r.MIMEType, 100)}
			data := r.Blob
			if r.Text != "" {
				data = []byte(r.Text)
			}
			b.Bytes = int64(len(data))
			if binaries < maxArtifacts && len(data) > 0 {
				binaries++
				mime := r.MIMEType
				if mime == "" {
					mime = "application/octet-stream"
				}
				if a := p.artifact(fmt.Sprintf("resource-%d", binaries), mime, data); a != nil {
					b.Item, b.Ref = a.Item, a.Ref
				}
			}
			add(b)
			if r.Text != "" && modelLeft > 0 {
				t, _ := clip(r.Text, modelLeft)
				modelLeft -= len(t)
				model = append(model, fmt.Sprintf("[resource %s]\n%s", r.URI, t))
			} else {
				model = append(model, fmt.Sprintf("[resource %s, %d bytes%s]", r.URI, len(data), refNote(b.Ref)))
			}
		}
	}
	if len(res.Content) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			t, _ := clip(string(b), p.bound)
			add(mcpschema.Block{Type: "text", Text: t})
			model = append(model, t)
		}
	}
	p.publish()
	text := strings.Join(model, "\n")
	summary := p.pl.Tool
	if first := clipLine(firstLine(text), 80); first != "" {
		summary += " · " + first
	}
	if res.IsError {
		if text == "" {
			text = "the tool reported an error"
		}
		return toolview.Result{Text: text, IsError: true, Summary: summary},
			&toolview.Failure{Reason: reasonToolError, Err: fmt.Errorf("mcp: %s reported an error", name)}
	}
	return toolview.Result{Text: text, Summary: summary}, nil
}

// artifact writes data to a new supplemental item's artifact and
// checkpoints it as final. It returns nil when the host keeps no artifacts.
func (p *presenter) artifact(key, contentType string, data []byte) *mcpschema.Block {
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	item := p.inv.Supplemental(key)
	w, err := item.NewArtifact(contentType)
	if err != nil {
		return nil
	}
	if _, err := w.Write(data); err != nil {
		return nil
	}
	if _, err := item.ReplaceArtifact(w.Checkpoint(mcpschema.Content, 1, true)); err != nil {
		return nil
	}
	return &mcpschema.Block{Type: "text", Item: key, Ref: w.Ref(), Bytes: int64(len(data))}
}

func refNote(ref string) string {
	if ref == "" {
		return ""
	}
	return ", artifact " + ref
}

// clip returns at most n bytes of s, cut at a rune boundary.
func clip(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// clipLine is clip for one-line fields: newlines become spaces.
func clipLine(s string, n int) string {
	c, _ := clip(strings.ReplaceAll(s, "\n", " "), n)
	return c
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
