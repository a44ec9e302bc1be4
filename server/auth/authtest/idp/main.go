// Command idp runs authtest's OpenID Connect provider on 127.0.0.1 for the
// browser suite (web/e2e/accounts.mjs): it prints "issuer URL" and serves
// until its standard input closes.
//
//	go run ./server/auth/authtest/idp -client folio -secret S -redirect http://127.0.0.1:PORT/auth/callback
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/foliodev/folio/server/auth/authtest"
)

func main() {
	client := flag.String("client", "folio", "client ID")
	secret := flag.String("secret", "", "client secret")
	redirect := flag.String("redirect", "", "redirect URIs, comma-separated")
	flag.Parse()
	p := authtest.Serve(authtest.Client{ID: *client, Secret: *secret, Redirects: strings.Split(*redirect, ",")})
	fmt.Printf("issuer %s\n", p.Issuer)
	io.Copy(io.Discard, os.Stdin)
}
