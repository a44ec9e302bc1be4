package tui

import (
	"slices"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
)

// A code block without a language is looked up at once, and tokenised as
// chroma's quick.Highlight tokenises it when the lookup fails: the lexer
// its analysers pick, else the fallback.
func TestUnnamedCodeBlockLexer(t *testing.T) {
	l := lexers.Get("")
	if l == nil {
		t.Fatal("no lexer answers the empty language: chroma matches every filename pattern for it")
	}
	for _, src := range []string{
		"package main\n\nfunc main() {}\n",
		"#!/bin/sh\necho hi | grep h\n",
		"<?php echo 'x'; ?>\n",
		"<html><body>x</body></html>\n",
		"plain words, nothing to guess\n",
		"",
	} {
		want := lexers.Analyse(src)
		if want == nil {
			want = lexers.Fallback
		}
		if want == l {
			t.Fatalf("%q: the analysers picked the unnamed lexer", src)
		}
		if got, exp := chromaTokens(t, l, src), chromaTokens(t, want, src); !slices.Equal(got, exp) {
			t.Errorf("%q: tokens %v, want %v (%s)", src, got, exp, want.Config().Name)
		}
	}
}

func chromaTokens(t *testing.T, l chroma.Lexer, src string) []chroma.Token {
	t.Helper()
	it, err := chroma.Coalesce(l).Tokenise(nil, src)
	if err != nil {
		t.Fatal(err)
	}
	return it.Tokens()
}
