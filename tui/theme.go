package tui

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
)

// Theme is how painted lines look: a palette for a dark or light terminal
// background, and the color capability of the terminal. Painters always
// style with full colors; the theme's profile then downsamples the painted
// lines once, when they enter the render cache, so NO_COLOR keeps bold and
// italics but drops colors, and a dumb terminal gets plain text.
//
// Theme is a small comparable value so it can be part of a cache key.
type Theme struct {
	// Dark is true on a dark terminal background.
	Dark bool
	// Profile is the terminal's color capability. colorprofile.NoTTY means
	// plain text without any escape sequences.
	Profile colorprofile.Profile
}

// DarkTheme is a full-color theme for a dark background.
var DarkTheme = Theme{Dark: true, Profile: colorprofile.TrueColor}

// LightTheme is a full-color theme for a light background.
var LightTheme = Theme{Dark: false, Profile: colorprofile.TrueColor}

// PlainTheme paints text only: no colors and no attributes.
var PlainTheme = Theme{Dark: true, Profile: colorprofile.NoTTY}

// DetectTheme chooses a theme from the environment (a list of KEY=value
// strings, like os.Environ) and whether the terminal reported a dark
// background (Bubble Tea's BackgroundColorMsg; assume dark when unknown).
// NO_COLOR drops colors but keeps text attributes; TERM=dumb (or no TERM)
// gives plain text.
func DetectTheme(env []string, darkBackground bool) Theme {
	p := colorprofile.Env(env)
	if p == colorprofile.Unknown {
		p = colorprofile.NoTTY
	}
	return Theme{Dark: darkBackground, Profile: p}
}

// Plain reports whether the theme writes no escape sequences at all.
func (t Theme) Plain() bool { return t.Profile <= colorprofile.NoTTY }

// finish downsamples a painted line to the theme's profile.
func (t Theme) finish(s string) string {
	if t.Profile >= colorprofile.TrueColor || !strings.Contains(s, "\x1b") {
		return s
	}
	var b strings.Builder
	w := colorprofile.Writer{Forward: &b, Profile: t.Profile}
	_, _ = w.WriteString(s)
	return b.String()
}

// palette holds the styles painters use. It is derived from a Theme and
// never escapes the package.
type palette struct {
	text, dim, faint, bold, accent, user, code lipgloss.Style
	ok, warn, bad, info                        lipgloss.Style
	meterOn, meterOff                          lipgloss.Style
}

func (t Theme) palette() *palette {
	ld := lipgloss.LightDark(t.Dark)
	fg := func(light, dark string) lipgloss.Style {
		return lipgloss.NewStyle().Foreground(ld(lipgloss.Color(light), lipgloss.Color(dark)))
	}
	return &palette{
		text:     lipgloss.NewStyle(),
		dim:      fg("#6c6c6c", "#8a8a8a"),
		faint:    fg("#9e9e9e", "#5f5f5f"),
		bold:     lipgloss.NewStyle().Bold(true),
		accent:   fg("#5f00d7", "#af87ff").Bold(true),
		user:     fg("#005f87", "#87d7ff").Bold(true),
		code:     fg("#875f00", "#d7af5f"),
		ok:       fg("#008700", "#5fd787"),
		warn:     fg("#af5f00", "#ffaf00"),
		bad:      fg("#d70000", "#ff5f5f"),
		info:     fg("#0057b3", "#5fafff"),
		meterOn:  fg("#0057b3", "#5fafff"),
		meterOff: fg("#bcbcbc", "#444444"),
	}
}
