// Command mcpdemo is a small MCP server, built on the official Go SDK, for
// trying folio's MCP client by hand and for folio's tests. It speaks over
// stdio and offers two tools:
//
//   - progress reports progress `steps` times, `delay_ms` apart, then
//     returns a line of text and a small PNG image (plus `text_bytes` of
//     filler text, to try the result bound);
//   - fail always fails, as a tool error the model can read.
//
// Two environment variables exist for tests: MCPDEMO_EVENTS names a file
// the server appends "start", "call NAME" and "cancelled NAME" lines to,
// and MCPDEMO_CHILD=1 makes it start a long sleep child, so a test can see
// that stopping the server stops its children too.
//
// Configure it in folio's config.json:
//
//	{"mcpServers": {"demo": {"command": "/path/to/mcpdemo"}}}
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"log"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type progressArgs struct {
	Steps     int `json:"steps,omitempty" jsonschema:"how many progress reports to send (default 3, at most 100)"`
	DelayMS   int `json:"delay_ms,omitempty" jsonschema:"milliseconds between reports (default 200)"`
	TextBytes int `json:"text_bytes,omitempty" jsonschema:"extra filler text to return, in bytes"`
}

type failArgs struct {
	Reason string `json:"reason,omitempty" jsonschema:"what to say in the error"`
}

func main() {
	event("start")
	if os.Getenv("MCPDEMO_CHILD") == "1" {
		child := exec.Command("sleep", "300")
		if err := child.Start(); err == nil {
			event(fmt.Sprintf("child %d", child.Process.Pid))
		}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpdemo", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "progress", Description: "Counts through a few steps, reporting progress, and returns text and an image."}, progress)
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails."}, fail)
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Print(err)
	}
}

func progress(ctx context.Context, req *mcp.CallToolRequest, a progressArgs) (*mcp.CallToolResult, any, error) {
	event("call progress")
	steps := a.Steps
	if steps <= 0 {
		steps = 3
	}
	steps = min(steps, 100)
	delay := time.Duration(a.DelayMS) * time.Millisecond
	if a.DelayMS <= 0 {
		delay = 200 * time.Millisecond
	}
	token := req.Params.GetProgressToken()
	for i := 1; i <= steps; i++ {
		if token != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token, Progress: float64(i), Total: float64(steps),
				Message: fmt.Sprintf("step %d of %d", i, steps)})
		}
		select {
		case <-ctx.Done():
			event("cancelled progress")
			return nil, nil, ctx.Err()
		case <-time.After(delay):
		}
	}
	text := fmt.Sprintf("counted %d steps", steps)
	if a.TextBytes > 0 {
		text += "\n" + strings.Repeat("filler text. ", a.TextBytes/13+1)[:a.TextBytes]
	}
	return &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: text},
		&mcp.ImageContent{MIMEType: "image/png", Data: picture(steps)},
	}}, nil, nil
}

func fail(_ context.Context, _ *mcp.CallToolRequest, a failArgs) (*mcp.CallToolResult, any, error) {
	event("call fail")
	why := a.Reason
	if why == "" {
		why = "this tool always fails"
	}
	// An error from a typed handler becomes a tool result with isError set,
	// which the model can read and react to.
	return nil, nil, errors.New(why)
}

// picture draws a small bar chart of the steps.
func picture(steps int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 32, 16))
	for x := 0; x < 32; x++ {
		for y := 0; y < 16; y++ {
			c := color.RGBA{240, 240, 240, 255}
			if x*steps/32 < steps && y >= 16-(x*16/32) {
				c = color.RGBA{40, 120, 200, 255}
			}
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

func event(line string) {
	path := os.Getenv("MCPDEMO_EVENTS")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%d %s\n", os.Getpid(), line)
}
