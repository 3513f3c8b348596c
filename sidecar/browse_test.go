package sidecar

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// serveGuard bounds every wait on a serve loop, so that a loop that blocks
// fails its test instead of hanging it.
const serveGuard = 10 * time.Second

// browseSession is a serve loop driven through pipes, as the server drives
// a browse container: one request at a time, whichever subtest sends it.
type browseSession struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan int
	turn sync.Mutex

	once sync.Once
	code int
}

// startServe runs serve over vars; the loop is told its stdin ended and
// awaited when the test ends.
func startServe(t *testing.T, vars map[string]string) *browseSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &browseSession{t: t, in: inW, out: bufio.NewReader(outR), done: make(chan int, 1)}
	go func() {
		code := serve(env(vars), inR, outW)
		outW.Close() //nolint:errcheck // a pipe's Close never fails
		s.done <- code
	}()
	t.Cleanup(func() {
		// Ends a loop still running: its stdin ends, its writes fail.
		inW.Close()  //nolint:errcheck // a pipe's Close never fails
		outR.Close() //nolint:errcheck // as above
		s.exit()
	})
	return s
}

// serveVars is the environment of a serve loop over the volume v.
func serveVars(v volume, extra ...string) map[string]string {
	vars := map[string]string{EnvMountRoot: v.ws}
	for i := 0; i+1 < len(extra); i += 2 {
		vars[extra[i]] = extra[i+1]
	}
	return vars
}

// exit waits for serve to return and gives its exit code.
func (s *browseSession) exit() int {
	s.t.Helper()
	s.once.Do(func() {
		select {
		case s.code = <-s.done:
		case <-time.After(serveGuard):
			s.t.Fatalf("serve did not return within %v", serveGuard)
		}
	})
	return s.code
}

// do sends one request and returns its reply. The t of each call is the
// (sub)test sending.
func (s *browseSession) do(t *testing.T, req BrowseRequest) BrowseReply {
	t.Helper()
	line, err := json.Marshal(req)
	require.NoError(t, err)
	_, reply := s.send(t, string(line)+"\n")
	return reply
}

// send writes raw to stdin and reads one reply: its line, checked to be
// one compact JSON object, and the bytes that follow it.
func (s *browseSession) send(t *testing.T, raw string) (string, BrowseReply) {
	t.Helper()
	line, reply, err := s.exchange(t, raw)
	require.NoError(t, err)
	return line, reply
}

// exchange is send that returns what went wrong, io.EOF once the loop has
// ended.
func (s *browseSession) exchange(t *testing.T, raw string) (string, BrowseReply, error) {
	t.Helper()
	type result struct {
		line  string
		reply BrowseReply
		err   error
	}
	s.turn.Lock()
	defer s.turn.Unlock()
	got := make(chan result, 1)
	go func() {
		if _, err := io.WriteString(s.in, raw); err != nil {
			got <- result{err: err}
			return
		}
		line, reply, err := readReply(s.out)
		got <- result{line: line, reply: reply, err: err}
	}()
	select {
	case r := <-got:
		return r.line, r.reply, r.err
	case <-time.After(serveGuard):
		t.Fatalf("no reply to %.80q within %v", raw, serveGuard)
		return "", BrowseReply{}, nil
	}
}

// readReply reads one reply line and, for a read, its Length bytes.
func readReply(r *bufio.Reader) (string, BrowseReply, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", BrowseReply{}, err
	}
	line = strings.TrimSuffix(line, "\n")
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(line)); err != nil || compact.String() != line || !strings.HasPrefix(line, "{") {
		return "", BrowseReply{}, errors.New("reply line " + strconv.Quote(line) + " is not one compact JSON object")
	}
	var reply BrowseReply
	if err := json.Unmarshal([]byte(line), &reply); err != nil {
		return "", BrowseReply{}, err
	}
	if reply.Length > 0 {
		reply.Data = make([]byte, reply.Length)
		if _, err := io.ReadFull(r, reply.Data); err != nil {
			return "", BrowseReply{}, err
		}
	}
	return line, reply, nil
}

func ls(p string, limit int, after string) BrowseRequest {
	return BrowseRequest{Op: OpList, Path: p, Limit: limit, After: after}
}

func rd(p string, offset, length int64) BrowseRequest {
	return BrowseRequest{Op: OpRead, Path: p, Offset: offset, Length: length}
}

// refusalLine is the exact line of a refused request.
func refusalLine(reason, message string) string {
	return `{"ok":false,"error":` + quote(message) + `,"reason":` + quote(reason) + `}`
}

func requireRefused(t *testing.T, r BrowseReply, reason string) {
	t.Helper()
	require.False(t, r.OK, "refused")
	require.Equal(t, reason, deref(r.Reason), "reason, with the message %q", deref(r.Error))
	require.NotEmpty(t, deref(r.Error))
	require.Empty(t, r.Entries)
	require.Zero(t, r.Length)
}

func names(entries []Entry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Name
	}
	return out
}

// TestServeLoop covers the conversation itself: every request line gets
// one reply line, whatever it holds, and the loop ends on stdin's end or a
// timer with exit code 0.
func TestServeLoop(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	v.write(t, "f", []byte("hello"), 0o644)
	good := `{"op":"ls","path":` + quote(v.at("f")) + `}` + "\n"

	t.Run("ErrMalformedLinesThenOK", func(t *testing.T) {
		t.Parallel()
		s := startServe(t, serveVars(v))
		for _, raw := range []string{
			"not json", "{", "[1]", `"ls"`, "null", `{"op":"ls"} trailing`,
			`{"op":"chmod","path":` + quote(v.at("f")) + `}`,
			`{"op":"ls","path":` + quote(v.at("f")) + `,"limit":"ten"}`,
		} {
			_, r := s.send(t, raw+"\n")
			requireRefused(t, r, ReasonEnvInvalid)
		}
		line, r := s.send(t, good)
		require.True(t, r.OK, line)
		require.Equal(t, []string{"f"}, names(r.Entries))
	})
	t.Run("ErrUnknownOp", func(t *testing.T) {
		t.Parallel()
		s := startServe(t, serveVars(v))
		line, _ := s.send(t, `{"op":"chmod","path":"/x"}`+"\n")
		require.Equal(t, refusalLine(ReasonEnvInvalid, `unknown op "chmod"`), line)
	})
	t.Run("ErrOverLongLineThenOK", func(t *testing.T) {
		t.Parallel()
		s := startServe(t, serveVars(v))
		// The longest line taken, its newline included, then one byte more.
		fits := strings.TrimSuffix(good, "\n") + strings.Repeat(" ", maxRequestLine-len(good)) + "\n"
		require.Len(t, fits, maxRequestLine)
		_, r := s.send(t, fits)
		require.True(t, r.OK)
		line, _ := s.send(t, " "+fits)
		require.Equal(t, refusalLine(ReasonEnvInvalid, "the request line is over the 65536-byte bound"), line)
		_, r = s.send(t, `{"op":"ls","path":"`+strings.Repeat("a", 3*maxRequestLine)+`"}`+"\n")
		requireRefused(t, r, ReasonEnvInvalid)
		_, r = s.send(t, good)
		require.True(t, r.OK, "the rest of the long line was discarded")
		require.Equal(t, []string{"f"}, names(r.Entries))
	})
	t.Run("BlankLinesGetNoReply", func(t *testing.T) {
		t.Parallel()
		s := startServe(t, serveVars(v))
		_, r := s.send(t, "\n \t\r\n"+strings.TrimSuffix(good, "\n")+"\r\n")
		require.True(t, r.OK, "the first reply answers the request after the blank lines")
		require.Equal(t, []string{"f"}, names(r.Entries))
	})
	t.Run("EOFExits0", func(t *testing.T) {
		t.Parallel()
		s := startServe(t, serveVars(v))
		_, r := s.send(t, good)
		require.True(t, r.OK)
		require.NoError(t, s.in.Close())
		require.Equal(t, ExitOK, s.exit())
	})
	t.Run("PipelinedRequestsAndUnterminatedLast", func(t *testing.T) {
		t.Parallel()
		in := good + `{"op":"read","path":` + quote(v.at("f")) + `}` + "\n" + "bogus\n" + strings.TrimSuffix(good, "\n")
		var out bytes.Buffer
		require.Equal(t, ExitOK, serve(env(serveVars(v)), strings.NewReader(in), &out))
		r := bufio.NewReader(&out)
		var got []BrowseReply
		for {
			_, reply, err := readReply(r)
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			got = append(got, reply)
		}
		require.Len(t, got, 4)
		require.True(t, got[0].OK)
		require.Equal(t, "hello", string(got[1].Data))
		requireRefused(t, got[2], ReasonEnvInvalid)
		require.True(t, got[3].OK, "the last line is answered without its newline")
	})
	t.Run("IdleExits0", func(t *testing.T) {
		t.Parallel()
		start := time.Now()
		s := startServe(t, serveVars(v, EnvIdleSecs, "1"))
		_, r := s.send(t, good)
		require.True(t, r.OK)
		require.Equal(t, ExitOK, s.exit(), "stdin stays open; the idle timer ends the loop")
		require.GreaterOrEqual(t, time.Since(start), time.Second)
	})
	t.Run("LifetimeExits0WhileBusy", func(t *testing.T) {
		t.Parallel()
		s := startServe(t, serveVars(v, EnvLifetimeSecs, "1"))
		deadline := time.Now().Add(serveGuard)
		requests := 0
		for ; time.Now().Before(deadline); requests++ {
			if _, _, err := s.exchange(t, good); err != nil {
				require.ErrorIs(t, err, io.EOF, "the loop ended, closing stdout")
				break
			}
		}
		require.Equal(t, ExitOK, s.exit(), "requests kept coming; the lifetime ended the loop")
		require.Positive(t, requests)
	})
	t.Run("ThroughMain", func(t *testing.T) {
		t.Parallel()
		var out bytes.Buffer
		require.Equal(t, ExitOK, Main([]string{CommandServe}, env(serveVars(v)), strings.NewReader(good), &out))
		_, r, err := readReply(bufio.NewReader(&out))
		require.NoError(t, err)
		require.True(t, r.OK)
	})
}

// TestServeEnv refuses a bad environment in one reply line, before any
// request, with ExitUsage.
func TestServeEnv(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	for _, tc := range []struct {
		name    string
		vars    map[string]string
		message string
	}{
		{"ErrRootUnset", map[string]string{}, "CAIRN_MOUNT_ROOT is not set"},
		{"ErrRootRelative", map[string]string{EnvMountRoot: "mnt/ws"}, `CAIRN_MOUNT_ROOT "mnt/ws" is not an absolute path`},
		{"ErrRootMissing", map[string]string{EnvMountRoot: v.at("absent")}, "the mount root " + v.at("absent") + " cannot be opened: no such file or directory"},
		{"ErrIdleText", serveVars(v, EnvIdleSecs, "soon"), "CAIRN_IDLE_SECS must be a positive whole number of seconds"},
		{"ErrIdleZero", serveVars(v, EnvIdleSecs, "0"), "CAIRN_IDLE_SECS must be a positive whole number of seconds"},
		{"ErrLifetimeNegative", serveVars(v, EnvLifetimeSecs, "-5"), "CAIRN_LIFETIME_SECS must be a positive whole number of seconds"},
		{"ErrLifetimeFraction", serveVars(v, EnvLifetimeSecs, "1.5"), "CAIRN_LIFETIME_SECS must be a positive whole number of seconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			code := serve(env(tc.vars), strings.NewReader(`{"op":"ls","path":"/"}`+"\n"), &out)
			require.Equal(t, ExitUsage, code)
			require.Equal(t, refusalLine(ReasonEnvInvalid, tc.message)+"\n", out.String())
		})
	}
}
