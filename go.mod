module github.com/foliodev/folio

go 1.26

require github.com/go-json-experiment/json v0.0.0-20251027170946-4849db3c2f7e // indirect
