package sidecar

import (
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// Progress reports. A put, download, pack, unpack, snapshot or restore run
// as a dialog with CAIRN_PROGRESS=1 tells the server how far it is: a Need "progress" line
// whose Size is the bytes moved so far and Total the bytes in all (0:
// unknown), at most every ProgressEvery and once at the end. The server
// answers each with an empty Grant; without CAIRN_PROGRESS nothing is
// asked.
const (
	EnvProgress   = "CAIRN_PROGRESS"
	NeedProgress  = "progress"
	ProgressEvery = 250 * time.Millisecond
)

// progress counts the bytes read through it and reports them from a
// goroutine of its own. A nil *progress counts nothing and reports nothing.
type progress struct {
	moved    atomic.Int64
	total    int64
	talk     *conversation
	reported int64
	stop     chan struct{}
	done     chan struct{}
}

// startProgress starts the reports of a transfer of total bytes (0:
// unknown) on talk, when the server asked for them; else it returns nil.
func startProgress(env Env, talk *conversation, total int64) *progress {
	if env(EnvProgress) != "1" {
		return nil
	}
	p := &progress{total: total, talk: talk, stop: make(chan struct{}), done: make(chan struct{})}
	go p.report()
	return p
}

func (p *progress) report() {
	defer close(p.done)
	tick := time.NewTicker(ProgressEvery)
	defer tick.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-tick.C:
			if !p.tell() {
				return
			}
		}
	}
}

// tell reports the count if it moved since the last report; false when the
// server could not be told (it is gone, or refused), which ends the reports
// but not the transfer.
func (p *progress) tell() bool {
	n := p.moved.Load()
	if p.total > 0 {
		// An unpack of a zip may fetch a range twice.
		n = min(n, p.total)
	}
	if n == p.reported {
		return true
	}
	p.reported = n
	_, f := p.talk.exchange(Need{Need: NeedProgress, Size: n, Total: p.total}, "progress")
	return f == nil
}

// reader counts what is read through r.
func (p *progress) reader(r io.Reader) io.Reader {
	if p == nil {
		return r
	}
	return &countingReader{r: r, n: &p.moved}
}

// add counts n bytes moved other than through reader or writer.
func (p *progress) add(n int64) {
	if p != nil {
		p.moved.Add(n)
	}
}

// client is c counting the bytes of every response body it receives.
func (p *progress) client(c *http.Client) *http.Client {
	if p == nil {
		return c
	}
	counted := *c
	counted.Transport = countingTransport{next: c.Transport, p: p}
	return &counted
}

type countingTransport struct {
	next http.RoundTripper
	p    *progress
}

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err == nil {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{t.p.reader(resp.Body), resp.Body}
	}
	return resp, err
}

// writer counts what is written through w.
func (p *progress) writer(w io.Writer) io.Writer {
	if p == nil {
		return w
	}
	return &countingWriter{w: w, n: &p.moved}
}

// end stops the reports, waits for one in flight and reports the final
// count, so that nothing is printed after the result line.
func (p *progress) end() {
	if p == nil {
		return
	}
	close(p.stop)
	<-p.done
	p.tell()
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n.Add(int64(n))
	return n, err
}

type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n.Add(int64(n))
	return n, err
}
