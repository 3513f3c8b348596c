package ptyshell

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/gorilla/websocket"
)

// DefaultTerm is TERM in the container when the handshake names none.
const DefaultTerm = "xterm-256color"

// HandshakeTimeout bounds the dial and the upgrade.
const HandshakeTimeout = 10 * time.Second

var termPattern = regexp.MustCompile(`^[A-Za-z0-9._+-]{1,64}$`)

// Handshake is what the shell request carries in its query.
type Handshake struct {
	Size Size
	Term string
}

// Query returns the handshake's query parameters: cols, rows and, when
// set, term.
func (h Handshake) Query() url.Values {
	q := url.Values{}
	q.Set("cols", strconv.Itoa(h.Size.Cols))
	q.Set("rows", strconv.Itoa(h.Size.Rows))
	if h.Term != "" {
		q.Set("term", h.Term)
	}
	return q
}

// ParseHandshake reads and validates the query of a shell request: cols
// and rows are required integers within 1–1000; term is optional, must
// match [A-Za-z0-9._+-]{1,64} and defaults to DefaultTerm. An error is the
// 400 refusal `invalid_terminal`; its text names the bad parameter.
func ParseHandshake(q url.Values) (Handshake, error) {
	dim := func(name string) (int, error) {
		v := q.Get(name)
		if v == "" {
			return 0, fmt.Errorf("%s is required", name)
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < MinDimension || n > MaxDimension {
			return 0, fmt.Errorf("%s must be an integer from %d to %d", name, MinDimension, MaxDimension)
		}
		return n, nil
	}
	cols, err := dim("cols")
	if err != nil {
		return Handshake{}, err
	}
	rows, err := dim("rows")
	if err != nil {
		return Handshake{}, err
	}
	term := DefaultTerm
	if q.Has("term") {
		term = q.Get("term")
		if !termPattern.MatchString(term) {
			return Handshake{}, errors.New("term must match [A-Za-z0-9._+-]{1,64}")
		}
	}
	return Handshake{Size: Size{Cols: cols, Rows: rows}, Term: term}, nil
}

// Offered reports whether the request offers Subprotocol in
// Sec-WebSocket-Protocol, possibly among others; a request that
// does not is refused with 400 `subprotocol_required`.
func Offered(r *http.Request) bool {
	return slices.Contains(websocket.Subprotocols(r), Subprotocol)
}
