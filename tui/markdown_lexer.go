package tui

import (
	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
)

// Glamour highlights a code block through chroma's quick.Highlight, which
// looks its language up by name. A block without a language (a fence with
// no info string) misses every name and alias, and chroma then matches ""
// against every lexer's filename patterns, twice, before it guesses the
// language from the code: milliseconds a block, most of the time folio log
// show spends painting a long conversation. unnamedLexer answers the
// lookup of "" at once and does what quick.Highlight does when the lookup
// fails, so a block highlights exactly as before.
type unnamedLexer struct{ reg *chroma.LexerRegistry }

var unnamedConfig = &chroma.Config{Name: "folio-unnamed-code", Aliases: []string{""}}

func init() { lexers.GlobalLexerRegistry.Register(&unnamedLexer{}) }

func (l *unnamedLexer) Config() *chroma.Config { return unnamedConfig }

// Tokenise tokenises text with the lexer chroma's analysers pick for it,
// else chroma's fallback (quick.Highlight coalesces the tokens, as it
// does theirs).
func (l *unnamedLexer) Tokenise(o *chroma.TokeniseOptions, text string) (chroma.Iterator, error) {
	reg := l.reg
	if reg == nil {
		reg = lexers.GlobalLexerRegistry
	}
	picked := reg.Analyse(text)
	if picked == nil {
		picked = lexers.Fallback
	}
	return picked.Tokenise(o, text)
}

func (l *unnamedLexer) SetRegistry(r *chroma.LexerRegistry) chroma.Lexer { l.reg = r; return l }

func (l *unnamedLexer) SetAnalyser(func(string) float32) chroma.Lexer { return l }

// AnalyseText never claims a text: the lexer is only ever asked for by
// its (empty) name.
func (l *unnamedLexer) AnalyseText(string) float32 { return 0 }
