package sidecar

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"syscall"
	"time"
)

// Defaults and bounds of the serve loop.
const (
	defaultIdle      = 60 * time.Second
	defaultLifetime  = 300 * time.Second
	defaultListLimit = 200
	// maxRequestLine bounds one request line, its newline included. A
	// 4096-byte path and a 255-byte name, every byte escaped by
	// encoding/json as six ("\u003c"), take about 26 KiB.
	maxRequestLine = 64 << 10
)

// serve is the browse container: it answers each BrowseRequest line on in
// with one BrowseReply line on out, followed by exactly Length raw bytes for
// a read, and flushes after each. A line that is over-long, not JSON, or out
// of bounds gets an env_invalid refusal and the loop carries on. It returns 0
// at the end of in, after CAIRN_IDLE_SECS without a request, or
// CAIRN_LIFETIME_SECS after it started; a problem with its environment is
// refused in one reply line, before any request, with ExitUsage.
func serve(env Env, in io.Reader, out io.Writer) int {
	w := bufio.NewWriter(out)
	b, t, f := openBrowser(env)
	if f != nil {
		if writeReply(w, refusal(f)) != nil {
			return ExitFailure
		}
		return ExitUsage
	}
	defer b.close()
	done := make(chan struct{})
	defer close(done)
	return b.loop(readLines(in, done, b.maxBody()), w, t)
}

// serveTimeouts are the serve loop's backstops; the server also removes the
// container.
type serveTimeouts struct {
	idle, lifetime time.Duration
}

func openBrowser(env Env) (*browser, serveTimeouts, *failure) {
	root, bad := mountRoot(env)
	if bad != nil {
		return nil, serveTimeouts{}, fail(ReasonEnvInvalid, "%s", bad.ErrorText())
	}
	idle, f := envSeconds(env, EnvIdleSecs, defaultIdle)
	if f != nil {
		return nil, serveTimeouts{}, f
	}
	lifetime, f := envSeconds(env, EnvLifetimeSecs, defaultLifetime)
	if f != nil {
		return nil, serveTimeouts{}, f
	}
	writable, maxWrite, f := writeEnv(env)
	if f != nil {
		return nil, serveTimeouts{}, f
	}
	b, f := newBrowser(root)
	if f != nil {
		return nil, serveTimeouts{}, f
	}
	b.writable, b.maxWrite = writable, maxWrite
	return b, serveTimeouts{idle: idle, lifetime: lifetime}, nil
}

// writeEnv reads whether this serve writes, and the most one put carries.
func writeEnv(env Env) (bool, int64, *failure) {
	switch env(EnvWritable) {
	case "":
		return false, 0, nil
	case "1":
	default:
		return false, 0, fail(ReasonEnvInvalid, "%s must be 1 or unset", EnvWritable)
	}
	v := env(EnvMaxWriteBytes)
	if v == "" {
		return true, defaultMaxWrite, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 || n > MaxWriteBytes {
		return false, 0, fail(ReasonEnvInvalid, "%s must be a whole number of bytes from 1 to %d", EnvMaxWriteBytes, MaxWriteBytes)
	}
	return true, n, nil
}

// envSeconds reads a positive whole number of seconds, or def when unset.
func envSeconds(env Env, name string, def time.Duration) (time.Duration, *failure) {
	v := env(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 1 {
		return 0, fail(ReasonEnvInvalid, "%s must be a positive whole number of seconds", name)
	}
	return time.Duration(n) * time.Second, nil
}

// loop answers requests one at a time until in ends or a timer fires.
func (b *browser) loop(lines <-chan requestLine, w *bufio.Writer, t serveTimeouts) int {
	idle := time.NewTimer(t.idle)
	defer idle.Stop()
	life := time.NewTimer(t.lifetime)
	defer life.Stop()
	for {
		select {
		case l := <-lines:
			// A blank line is no request: it gets no reply.
			if l.tooLong || len(l.data) > 0 {
				if writeReply(w, b.answer(l)) != nil {
					return ExitFailure // the server stopped listening
				}
				idle.Reset(t.idle)
			}
			switch {
			case errors.Is(l.err, io.EOF):
				return ExitOK
			case l.err != nil:
				return ExitFailure
			}
		case <-idle.C:
			return ExitOK
		case <-life.C:
			return ExitOK
		}
	}
}

// answer decodes one request line and answers it.
func (b *browser) answer(l requestLine) BrowseReply {
	if l.tooLong {
		return refusal(fail(ReasonEnvInvalid, "the request line is over the %d-byte bound", maxRequestLine))
	}
	var req BrowseRequest
	if err := json.Unmarshal(l.data, &req); err != nil {
		return refusal(fail(ReasonEnvInvalid, "the request is not a browse request in JSON: %v", err))
	}
	if l.bodyRefused != nil {
		return refusal(l.bodyRefused)
	}
	switch req.Op {
	case OpList:
		return b.list(req)
	case OpRead:
		return b.read(req)
	case OpSearch:
		return b.search(req)
	case OpTree:
		return b.tree(req)
	case OpStat:
		return b.stat(req)
	}
	if Writes(req.Op) {
		if !b.writable {
			return refusal(fail(ReasonReadOnly, "this browse container mounts the volume read-only; %s is a writer's", req.Op))
		}
		return b.change(req, l.body)
	}
	return refusal(fail(ReasonEnvInvalid, "unknown op %q", req.Op))
}

func (b *browser) list(req BrowseRequest) BrowseReply {
	limit := cmp.Or(req.Limit, defaultListLimit)
	if limit < 1 || limit > MaxListLimit {
		return refusal(fail(ReasonEnvInvalid, "limit %d is out of bounds: 1 to %d, or 0 for %d", req.Limit, MaxListLimit, defaultListLimit))
	}
	l, f := b.listPath(req.Path, limit, req.After)
	if f != nil {
		return refusal(f)
	}
	return BrowseReply{OK: true, Path: l.path, Entries: l.entries, NextAfter: l.nextAfter}
}

func (b *browser) read(req BrowseRequest) BrowseReply {
	length := cmp.Or(req.Length, MaxReadBytes)
	switch {
	case req.Offset < 0:
		return refusal(fail(ReasonEnvInvalid, "offset %d is negative", req.Offset))
	case length < 1 || length > MaxReadBytes:
		return refusal(fail(ReasonEnvInvalid, "length %d is out of bounds: 1 to %d, or 0 for %d", req.Length, MaxReadBytes, MaxReadBytes))
	}
	c, f := b.readPath(req.Path, req.Offset, length)
	if f != nil {
		return refusal(f)
	}
	return BrowseReply{OK: true, Path: c.path, File: &c.file, Length: int64(len(c.data)), Data: c.data}
}

func refusal(f *failure) BrowseReply {
	return BrowseReply{OK: false, Error: &f.message, Reason: &f.reason}
}

// writeReply writes r as one JSON line, then its Data, and flushes.
func writeReply(w *bufio.Writer, r BrowseReply) error {
	line, err := json.Marshal(r)
	if err != nil {
		// Nothing in a reply can fail to encode; never send a line that
		// does not stand for the reply, though.
		r = refusal(fail(ReasonEnvInvalid, "the reply cannot be encoded: %v", err))
		line, _ = json.Marshal(r)
	}
	w.Write(line)     //nolint:errcheck // a bufio.Writer keeps its first error for Flush
	w.WriteByte('\n') //nolint:errcheck // as above
	w.Write(r.Data)   //nolint:errcheck // as above
	return w.Flush()
}

// requestLine is one request line read from stdin. err, when set, is the last
// thing readLines sends: io.EOF or a read error, with whatever came before
// it on that line in data.
type requestLine struct {
	data    []byte
	tooLong bool
	err     error
	// body is the raw bytes a put line announced, read after it;
	// bodyRefused says why they were read past instead.
	body        []byte
	bodyRefused *failure
}

// readLines reads request lines of at most maxRequestLine bytes into an
// unbuffered channel: the serve loop takes each as it answers. An
// over-long line is discarded up to its newline and reported as tooLong;
// a put's body, of at most maxBody bytes, comes with its line.
// The goroutine ends after the last line or once done is closed; when
// serve returns on a timer, it may stay blocked in a read of in until the
// process exits, which follows at once.
func readLines(in io.Reader, done <-chan struct{}, maxBody int64) <-chan requestLine {
	lines := make(chan requestLine)
	go func() {
		r := bufio.NewReaderSize(in, maxRequestLine)
		for {
			l := nextLine(r)
			if l.err == nil && len(l.data) > 0 {
				readBody(r, &l, maxBody)
			}
			select {
			case lines <- l:
			case <-done:
				return
			}
			if l.err != nil {
				return
			}
		}
	}()
	return lines
}

func nextLine(r *bufio.Reader) requestLine {
	data, err := r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = r.ReadSlice('\n')
		}
		return requestLine{tooLong: true, err: err}
	}
	// ReadSlice's bytes are the reader's buffer, overwritten by the next
	// read, which may start before the loop answers this line.
	return requestLine{data: bytes.Clone(bytes.TrimSpace(data)), err: err}
}

// browser answers browse requests about the volume mounted at root,
// walking every path from rootfd, a descriptor of root opened once.
type browser struct {
	root    string
	rootfd  int
	dirents []byte // getdents batch, reused by every listing
	link    []byte // symlink target, reused by every readlink
	data    []byte // read buffer, reused by every read
	// writable: this serve's container mounts the volume read-write and
	// answers the writes too, each put of at most maxWrite bytes.
	writable bool
	maxWrite int64
}

func newBrowser(root string) (*browser, *failure) {
	fd, err := syscall.Open(root, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fail(ReasonEnvInvalid, "the mount root %s cannot be opened: %v", root, err)
	}
	return &browser{root: root, rootfd: fd}, nil
}

func (b *browser) close() { syscall.Close(b.rootfd) }

// readBody reads the raw bytes a put line announces, so that the stream
// stays in step whatever the line asks: at most maxBody of them are kept
// (none by a reader); a larger body is read past and refused, a body the
// stream ends inside is refused and ends the loop.
func readBody(r *bufio.Reader, l *requestLine, maxBody int64) {
	var head struct {
		Op   string `json:"op"`
		Size int64  `json:"size"`
	}
	if json.Unmarshal(l.data, &head) != nil || head.Op != OpPut || head.Size == 0 {
		return
	}
	switch {
	case head.Size < 0:
		l.bodyRefused = fail(ReasonEnvInvalid, "size %d is negative", head.Size)
		return
	case head.Size > maxBody:
		if _, err := io.CopyN(io.Discard, r, head.Size); err != nil {
			l.err = err
		}
		l.bodyRefused = fail(ReasonWriteTooLarge, "a put carries at most %d bytes here, not %d", maxBody, head.Size)
		if maxBody == 0 {
			l.bodyRefused = fail(ReasonReadOnly, "this browse container mounts the volume read-only; put is a writer's")
		}
		return
	}
	l.body = make([]byte, head.Size)
	if n, err := io.ReadFull(r, l.body); err != nil {
		l.body, l.err = nil, io.EOF
		l.bodyRefused = fail(ReasonEnvInvalid, "the stream ended after %d of the put's %d bytes", n, head.Size)
	}
}
