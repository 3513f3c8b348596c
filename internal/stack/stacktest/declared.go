package stacktest

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// DeclareHugeBody sends a POST to rawURL that declares a body of declared
// bytes, sends only the first few, and returns the status the server
// answers while the rest is still owed. A server that waits for the body
// instead of refusing the declaration fails the test when the read
// deadline passes.
func DeclareHugeBody(t testing.TB, rawURL string, declared int64, header map[string]string) int {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	var d net.Dialer
	conn, err := d.DialContext(t.Context(), "tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n",
		u.RequestURI(), u.Host, declared)
	for k, v := range header {
		req += k + ": " + v + "\r\n"
	}
	if _, err := conn.Write([]byte(req + "\r\n{\"name\":")); err != nil {
		t.Fatal(err)
	}
	// Not a wait for something to happen: the bound within which a refusal
	// that needs no body must arrive.
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer while the declared body was still owed: %v", err)
	}
	defer resp.Body.Close()
	return resp.StatusCode
}
