// Command devserve serves the embedded web app on a loopback port for the
// browser suite (web/e2e). It prints "serving http://ADDR/" once it listens,
// and runs until killed. It is a test harness, not the product: `folio serve`
// is what users run.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/foliodev/folio/webui"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "loopback address to listen on")
	dir := flag.String("dir", "", "serve this build folder instead of the embedded app")
	flag.Parse()

	h := webui.Handler()
	if *dir != "" {
		h = webui.NewHandler(os.DirFS(*dir))
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("devserve: %v", err)
	}
	fmt.Printf("serving http://%s/\n", ln.Addr())
	log.Fatal(http.Serve(ln, h))
}
