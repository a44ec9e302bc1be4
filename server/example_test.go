package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/coder/websocket"

	"github.com/foliodev/folio/server"
)

// A Go program can be a client of a folio server, as the web app is: it
// offers the protocol's subprotocol and its token (in a subprotocol of its
// own, since browsers cannot set headers on a WebSocket), then says hello
// with the protocol version it speaks (docs/protocol.md).
func Example_client() {
	data, err := os.MkdirTemp("", "folio")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(data)
	token := server.NewToken()
	srv, err := server.New(server.Options{DataDir: data, Token: token})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	ctx := context.Background()
	url := "ws" + strings.TrimPrefix(hs.URL, "http") + "/api/v2/ws"
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{
		server.Subprotocol,
		server.TokenSubprotocolPrefix + base64.RawURLEncoding.EncodeToString([]byte(token)),
	}})
	if err != nil {
		log.Fatal(err)
	}
	defer ws.CloseNow()
	hello, _ := json.Marshal(map[string]any{"type": "hello", "id": "h1", "protocol": server.ProtocolVersion, "client": "example/1"})
	if err := ws.Write(ctx, websocket.MessageText, hello); err != nil {
		log.Fatal(err)
	}
	_, b, err := ws.Read(ctx)
	if err != nil {
		log.Fatal(err)
	}
	var welcome struct {
		Type     string `json:"type"`
		Protocol int    `json:"protocol"`
	}
	if err := json.Unmarshal(b, &welcome); err != nil {
		log.Fatal(err)
	}
	fmt.Println(ws.Subprotocol(), welcome.Type, welcome.Protocol == server.ProtocolVersion)
	// Output:
	// folio.v2 welcome true
}
