//go:build unix

package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/foliodev/folio/history"
)

// The local endpoint. Every folio process that owns conversations serves
// them to the other folio processes of the same user on a Unix socket in
// the data folder (history.EndpointPath: run/<pid>.sock, the folder 0700,
// the socket 0600). It speaks exactly the protocol of the TCP listener (the
// same Handler: HTTP resources and the WebSocket), so there is one contract
// and one Go client of it. The file modes keep other users out; on top of
// them each accepted connection's peer credentials (SO_PEERCRED) are
// checked, and a process of another user is answered 403 with the code
// peer-not-allowed and closed, its request never served.
//
// A connection admitted here needs no token and no Host or Origin check:
// a browser cannot reach a Unix socket, and the peer is the same user who
// could read the data folder anyway.

// localPeerKey marks a request that arrived on the local endpoint from a
// process of this user; its value is the peer's credentials.
type localPeerKey struct{}

// peerIdent is what the kernel says about the process at the other end of a
// local connection.
type peerIdent struct {
	PID, UID, GID int
}

// fromLocalPeer reports whether r came through the local endpoint.
func fromLocalPeer(r *http.Request) bool { return localPeer(r.Context()) }

// localPeer reports whether ctx is a request's (or its WebSocket's) that
// came through the local endpoint.
func localPeer(ctx context.Context) bool {
	_, ok := ctx.Value(localPeerKey{}).(peerIdent)
	return ok
}

// ErrPeerNotAllowed is returned by checkPeer for a process of another user.
var ErrPeerNotAllowed = errors.New("peer-not-allowed")

// checkPeer admits a peer of the same user as this process (uid), and
// refuses any other with an error naming both users.
func checkPeer(peer peerIdent, uid int) error {
	if peer.UID == uid {
		return nil
	}
	return fmt.Errorf("%w: this folio endpoint serves only user %d, and process %d runs as user %d", ErrPeerNotAllowed, uid, peer.PID, peer.UID)
}

// LocalEndpoint is a server's listener on its Unix socket.
type LocalEndpoint struct {
	Path string
	ln   net.Listener
	hs   *http.Server
	done chan struct{}
	once sync.Once
	err  error
}

// ServeLocal serves the server's Handler on the local endpoint of this
// process in dataDir until Close (or ctx's end). It makes the folder with
// mode 0700 (and tightens an existing one), removes the sockets of folio
// processes that no longer run, and binds run/<pid>.sock with mode 0600.
func (s *Server) ServeLocal(ctx context.Context, dataDir string) (*LocalEndpoint, error) {
	return serveLocalHandler(ctx, dataDir, s.Handler())
}

// serveLocalHandler is ServeLocal for any handler (a terminal chat serves
// its own conversation through a Server of its own).
func serveLocalHandler(ctx context.Context, dataDir string, h http.Handler) (*LocalEndpoint, error) {
	return serveLocal(ctx, dataDir, h, checkPeer)
}

// serveLocal is serveLocalHandler with the peer check given (tests that
// cannot switch users pass one that changes the credentials it gets).
func serveLocal(ctx context.Context, dataDir string, h http.Handler, check func(peerIdent, int) error) (*LocalEndpoint, error) {
	dir := history.EndpointsDir(dataDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("local endpoint: %w", err)
	}
	// MkdirAll leaves an existing folder's mode alone; one another program
	// made wider than 0700 is tightened, since the sockets' own mode is
	// the second wall, not the only one.
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("local endpoint: %w", err)
	}
	removeDeadEndpoints(dir)
	path := history.EndpointPath(dataDir, os.Getpid())
	if len(path) >= 104 { // sun_path: 108 bytes on Linux, 104 on the BSDs
		return nil, fmt.Errorf("local endpoint: the socket path %s is %d bytes, more than a Unix socket takes (103); use a shorter --data folder", path, len(path))
	}
	_ = os.Remove(path) // a process of this PID before (the PID was reused)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("local endpoint: %w", err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("local endpoint: %w", err)
	}
	e := &LocalEndpoint{Path: path, ln: &peerListener{Listener: ln, uid: os.Getuid(), check: check}, done: make(chan struct{})}
	e.hs = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if pc, ok := c.(*peerConn); ok {
				return context.WithValue(ctx, localPeerKey{}, pc.peer)
			}
			return ctx
		},
	}
	go func() {
		err := e.hs.Serve(e.ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		e.err = err
		close(e.done)
	}()
	go func() {
		select {
		case <-ctx.Done():
			e.Close()
		case <-e.done:
		}
	}()
	return e, nil
}

// Close stops the endpoint: the socket is removed and open connections
// (attached terminals) are closed, which is how they learn the owner went.
func (e *LocalEndpoint) Close() error {
	e.once.Do(func() {
		e.hs.Close()
		<-e.done
		_ = os.Remove(e.Path)
	})
	return e.err
}

// removeDeadEndpoints removes sockets named by PIDs that no longer run
// (an owner that was killed cannot remove its own).
func removeDeadEndpoints(dir string) {
	names, _ := os.ReadDir(dir)
	for _, n := range names {
		pid, err := strconv.Atoi(strings.TrimSuffix(n.Name(), ".sock"))
		if err != nil || !strings.HasSuffix(n.Name(), ".sock") || pid == os.Getpid() {
			continue
		}
		if !processAlive(pid) {
			_ = os.Remove(filepath.Join(dir, n.Name()))
		}
	}
}

// peerListener checks each accepted connection's peer credentials: a
// process of another user gets a refusal and is closed; Accept goes on to
// the next connection.
type peerListener struct {
	net.Listener
	uid   int
	check func(peerIdent, int) error // checkPeer, or a test's
}

type peerConn struct {
	net.Conn
	peer peerIdent
}

func (l *peerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		peer, err := peerCred(c)
		if err == nil {
			err = l.check(peer, l.uid)
		}
		if err != nil {
			refusePeer(c, err)
			continue
		}
		return &peerConn{Conn: c, peer: peer}, nil
	}
}

// refusePeer answers a connection it will not serve with an HTTP 403 in
// the protocol's error shape, then closes it, off the accepting goroutine.
// The request's head is waited for (and dropped unread) first: an HTTP
// client takes an answer that comes before its request for a broken
// connection, not for the refusal it is.
func refusePeer(c net.Conn, why error) {
	go func() {
		defer c.Close()
		body := fmt.Sprintf(`{"error":{"code":"peer-not-allowed","message":%s}}`, strconv.Quote(why.Error()))
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		var head []byte
		buf := make([]byte, 4096)
		for len(head) < 64<<10 && !strings.Contains(string(head), "\r\n\r\n") {
			n, err := c.Read(buf)
			head = append(head, buf[:n]...)
			if err != nil {
				break
			}
		}
		_, _ = io.WriteString(c, "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: "+
			strconv.Itoa(len(body))+"\r\n\r\n"+body)
	}()
}
