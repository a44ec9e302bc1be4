package export

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/receipt"
	"github.com/foliodev/folio/transcript"
)

// markdown writes c's presentation as a Markdown transcript for reading
// and sharing: the person's messages as quotes, answers as they were
// written, tool receipts and turn receipts as lines of their own. Instants
// are shown in loc.
func markdown(w io.Writer, c *history.Conversation, loc *time.Location) error {
	bw := bufio.NewWriter(w)
	title := history.DisplayTitle(c.Title, c.Messages)
	if title == "" {
		title = "Conversation " + c.Header.ConversationID
	}
	fmt.Fprintf(bw, "# %s\n", oneLine(title))
	if !c.Header.StartedAt.IsZero() {
		fmt.Fprintf(bw, "\n_Started %s_\n", c.Header.StartedAt.In(loc).Format("2006-01-02 15:04"))
	}
	for _, e := range c.Document.All() {
		bw.WriteString("\n")
		bw.WriteString(markdownEntry(e.Content, loc))
	}
	return bw.Flush()
}

func markdownEntry(c transcript.Content, loc *time.Location) string {
	var b strings.Builder
	switch c := c.(type) {
	case transcript.User:
		b.WriteString("**You**\n\n" + quote(c.Text))
	case transcript.Steering:
		b.WriteString("**You (while it ran)**\n\n" + quote(c.Text))
	case transcript.Agent:
		b.WriteString(strings.TrimRight(c.Markdown, "\n") + "\n")
	case transcript.Reasoning:
		label := c.Label
		if label == "" {
			label = "Thinking"
		}
		b.WriteString("<details><summary>" + oneLine(label) + "</summary>\n\n" + strings.TrimRight(c.Text, "\n") + "\n\n</details>\n")
	case transcript.Tool:
		b.WriteString(toolLine(c.Receipt))
	case transcript.Notice:
		b.WriteString("> _" + string(c.Tone) + ":_ " + oneLine(c.Text) + "\n")
	case transcript.ReportContent:
		b.WriteString(reportMarkdown(c.Report))
	case transcript.Header:
		s := "**" + oneLine(c.Name) + "**"
		if c.Model != "" {
			s += " · " + oneLine(strings.Trim(c.Provider+"/"+c.Model, "/"))
		}
		b.WriteString(s + "\n")
	case transcript.TurnReceipt:
		b.WriteString("_" + receipt.Line(c, loc) + "_\n")
	case transcript.Stopped:
		b.WriteString("_Stopped after " + receipt.Duration(c.Summary.ElapsedMs) + "._")
		if len(c.Summary.Done) > 0 {
			b.WriteString(" Done: " + strings.Join(c.Summary.Done, "; ") + ".")
		}
		if len(c.Summary.NotDone) > 0 {
			b.WriteString(" Not done: " + strings.Join(c.Summary.NotDone, "; ") + ".")
		}
		b.WriteString("\n")
	case transcript.Expanded:
		b.WriteString("```\n" + strings.TrimRight(c.Text, "\n") + "\n```\n")
	case transcript.Failure:
		s := c.Headline
		if s == "" {
			s = "The reply failed"
		}
		b.WriteString("> **" + oneLine(s) + "** (" + c.Reason + ")")
		if c.Detail != "" {
			b.WriteString(": " + oneLine(c.Detail))
		}
		b.WriteString("\n")
	case transcript.Compaction:
		b.WriteString("_Earlier messages were summarized:_\n\n" + quote(c.Summary))
	}
	return b.String()
}

// toolLine is a receipt as one list item: status mark, app, summary,
// duration, and what it left undone or why.
func toolLine(r transcript.ToolReceipt) string {
	mark := "✓"
	switch r.Status {
	case transcript.ToolFailed:
		mark = "✗"
	case transcript.ToolDenied:
		mark = "⊘"
	}
	s := "- " + mark + " `" + oneLine(r.App) + "` " + oneLine(r.Summary)
	if r.DurationMs != nil {
		s += " · " + receipt.Duration(*r.DurationMs)
	}
	if r.Reason != "" {
		s += " · " + oneLine(r.Reason)
	}
	if r.NotDone != "" {
		s += " · not done: " + oneLine(string(r.NotDone))
	}
	s += "\n"
	if r.DiffPreview != nil && len(r.DiffPreview.Lines) > 0 {
		s += "\n  ```diff\n"
		for _, l := range r.DiffPreview.Lines {
			s += "  " + l + "\n"
		}
		s += "  ```\n"
		if r.DiffPreview.HiddenLines > 0 {
			s += "  _" + strconv.FormatInt(r.DiffPreview.HiddenLines, 10) + " more lines_\n"
		}
	}
	return s
}

func reportMarkdown(r transcript.Report) string {
	var b strings.Builder
	b.WriteString("**" + oneLine(r.Label) + "**\n\n")
	for _, row := range r.Rows {
		switch row.Kind {
		case transcript.RowField:
			b.WriteString("- " + oneLine(row.Key) + ": " + oneLine(row.Value))
			if row.Detail != "" {
				b.WriteString(" (" + oneLine(row.Detail) + ")")
			}
		case transcript.RowItem:
			b.WriteString("- " + oneLine(row.Name))
			if row.Marker != "" {
				b.WriteString(" [" + string(row.Marker) + "]")
			}
			if row.Detail != "" {
				b.WriteString(" — " + oneLine(row.Detail))
			}
		case transcript.RowMeter:
			b.WriteString("- " + strconv.FormatFloat(row.Used, 'f', -1, 64) + "/" + strconv.FormatFloat(row.Total, 'f', -1, 64) + " " + oneLine(row.Caption))
		case transcript.RowText:
			b.WriteString(oneLine(row.Text))
		case transcript.RowGroup:
			b.WriteString("\n_" + oneLine(row.Label))
			if row.Count != "" {
				b.WriteString(" (" + oneLine(row.Count) + ")")
			}
			b.WriteString("_")
		case transcript.RowGap:
		}
		b.WriteString("\n")
	}
	if r.Note != "" {
		b.WriteString("\n_" + oneLine(r.Note) + "_\n")
	}
	return b.String()
}

func quote(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "> " + l
	}
	return strings.Join(lines, "\n") + "\n"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
