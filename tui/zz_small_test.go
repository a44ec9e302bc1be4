package tui

func init() { benchStart, benchEnd = 2_000, 20_000 }
