package sidecar

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// tooLongNeed would be a Need but for the spaces after it, which take it
// past the line bound.
var tooLongNeed = `{"need":"part","number":3,"size":30,"sha256_b64":"c2hh"}` + strings.Repeat(" ", maxDialogLine)

// dialogOutput is what a pack-like sidecar prints around two Needs: a
// plain line, a JSON line that is no Need, a long line, a Need too long to
// be one, and a last line without a newline.
var dialogOutput = strings.Join([]string{
	"starting",
	`{"progress":1}`,
	strings.Repeat("x", 100000),
	`{"need":"part","number":1,"size":10,"sha256_b64":"c2hh"}`,
	tooLongNeed,
	`  {"need":"part","number":2,"size":20,"sha256_b64":"c2hh"}  `,
	`{"ok":true}`,
}, "\n")

// dialogTest runs a DialogRun over a stream that writes stdout in chunks
// of chunk bytes (all of it when 0) and stderr in one go.
type dialogTest struct {
	answer func(context.Context, Need) (Grant, error)
	stdin  io.Writer
	stdout string
	stderr string
	chunk  int
}

// dialogEnd is what a run left: its DialogRun, the error handed to failed
// and the error the stream's copy ended with.
type dialogEnd struct {
	d         *DialogRun
	failed    error
	copyErr   error
	debugMsgs []string
}

func (dt dialogTest) run(t *testing.T) dialogEnd {
	t.Helper()
	var end dialogEnd
	debug := func(msg string, _ ...any) { end.debugMsgs = append(end.debugMsgs, msg) }
	end.d = NewDialogRun(t.Context(), dt.answer, dt.stdin, debug)
	end.d.Pump(func(stdout, stderr io.Writer) {
		_, _ = stderr.Write([]byte(dt.stderr))
		end.copyErr = writeChunks(stdout, []byte(dt.stdout), dt.chunk)
	}, func(err error) { end.failed = err })
	<-end.d.Done()
	return end
}

func writeChunks(w io.Writer, p []byte, chunk int) error {
	if chunk == 0 {
		chunk = len(p)
	}
	for len(p) > 0 {
		n := min(chunk, len(p))
		if _, err := w.Write(p[:n]); err != nil {
			return err
		}
		p = p[n:]
	}
	return nil
}

// grantLines decodes the Grant lines written to a sidecar's stdin.
func grantLines(t *testing.T, stdin string) []Grant {
	t.Helper()
	var grants []Grant
	for line := range strings.Lines(stdin) {
		require.True(t, strings.HasSuffix(line, "\n"), "a grant is one whole line")
		var g Grant
		require.NoError(t, json.Unmarshal([]byte(line), &g))
		grants = append(grants, g)
	}
	return grants
}

func TestDialogRun(t *testing.T) {
	t.Parallel()

	for _, chunk := range []int{0, 1, 4096} {
		t.Run(fmt.Sprintf("OKNeedsAnsweredRestKept/chunk%d", chunk), func(t *testing.T) {
			t.Parallel()
			var needs []Need
			var stdin bytes.Buffer
			end := dialogTest{stdout: dialogOutput, stderr: "a word on stderr\n", chunk: chunk, stdin: &stdin,
				answer: func(_ context.Context, n Need) (Grant, error) {
					needs = append(needs, n)
					return Grant{URL: fmt.Sprintf("http://store.test/part/%d", n.Number)}, nil
				}}.run(t)

			require.NoError(t, end.failed)
			require.NoError(t, end.copyErr)
			require.Equal(t, []Need{
				{Need: NeedPart, Number: 1, Size: 10, SHA256B64: "c2hh"},
				{Need: NeedPart, Number: 2, Size: 20, SHA256B64: "c2hh"},
			}, needs, "a Need line padded with spaces is a Need; one past the line bound is not")
			require.Equal(t, []Grant{{URL: "http://store.test/part/1"}, {URL: "http://store.test/part/2"}}, grantLines(t, stdin.String()))

			require.Equal(t, "a word on stderr\n"+
				"starting\n"+
				`{"progress":1}`+"\n"+
				strings.Repeat("x", maxDialogLine)+"\n"+
				tooLongNeed[:maxDialogLine]+"\n"+
				`{"ok":true}`, string(end.d.Output()), "stderr first; long lines cut; the last line kept without its newline")
			res, ok := ParseResult(end.d.Output())
			require.True(t, ok)
			require.True(t, res.OK)
			require.Empty(t, end.debugMsgs)
		})
	}

	t.Run("OKAnswerGetsTheRunContext", func(t *testing.T) {
		t.Parallel()
		type key struct{}
		ctx := context.WithValue(t.Context(), key{}, "the run")
		var got any
		d := NewDialogRun(ctx, func(ctx context.Context, _ Need) (Grant, error) {
			got = ctx.Value(key{})
			return Grant{URL: "u"}, nil
		}, io.Discard, func(string, ...any) {})
		d.Pump(func(stdout, _ io.Writer) {
			_, _ = stdout.Write([]byte(`{"need":"object","size":1,"sha256_b64":"c2hh"}` + "\n"))
		}, func(error) {})
		<-d.Done()
		require.Equal(t, "the run", got)
	})

	t.Run("ErrOfTheAnswerStopsThePump", func(t *testing.T) {
		t.Parallel()
		refused := errors.New("the archive grew past its bound")
		asked := 0
		var stdin bytes.Buffer
		end := dialogTest{stdout: "before\n" + `{"need":"object","size":1,"sha256_b64":"c2hh"}` + "\nafter\n", stdin: &stdin,
			answer: func(context.Context, Need) (Grant, error) {
				asked++
				return Grant{}, refused
			}}.run(t)

		require.Equal(t, 1, asked)
		require.ErrorIs(t, end.failed, refused)
		require.ErrorIs(t, end.copyErr, refused, "the copy stops at the failed Need")
		require.Empty(t, stdin.String(), "no grant is written")
		require.Equal(t, "before\n", string(end.d.Output()))
	})

	t.Run("OKGrantThatCannotBeWrittenIsOnlyLogged", func(t *testing.T) {
		t.Parallel()
		stdinR, stdinW := io.Pipe()
		stdinR.CloseWithError(io.ErrClosedPipe) // the sidecar is gone
		asked := 0
		need := `{"need":"object","size":1,"sha256_b64":"c2hh"}` + "\n"
		end := dialogTest{stdout: need + need + "last\n", stdin: stdinW,
			answer: func(context.Context, Need) (Grant, error) {
				asked++
				return Grant{URL: "http://store.test/secret"}, nil
			}}.run(t)

		require.NoError(t, end.failed)
		require.NoError(t, end.copyErr)
		require.Equal(t, 2, asked, "the run goes on; its exit code tells the rest")
		require.Equal(t, []string{"write a grant to the sidecar", "write a grant to the sidecar"}, end.debugMsgs)
		require.Equal(t, "last\n", string(end.d.Output()))
	})

	t.Run("OKOutputBounded", func(t *testing.T) {
		t.Parallel()
		line := strings.Repeat("z", 1000) + "\n"
		end := dialogTest{stdout: strings.Repeat(line, MaxOutput/len(line)+10), stderr: strings.Repeat("e", 2*maxDialogLine),
			chunk: 3000, stdin: io.Discard}.run(t)

		require.NoError(t, end.copyErr, "past the bound the output is dropped, not refused")
		out := end.d.Output()
		require.Len(t, out, maxDialogLine+MaxOutput)
		require.Equal(t, strings.Repeat("e", maxDialogLine), string(out[:maxDialogLine]))
		require.Equal(t, strings.Repeat(line, MaxOutput/len(line)), string(out[maxDialogLine:maxDialogLine+MaxOutput/len(line)*len(line)]))
	})

	t.Run("OKAwaitOutputSeesTheEnd", func(t *testing.T) {
		t.Parallel()
		d := NewDialogRun(t.Context(), nil, io.Discard, func(string, ...any) {})
		d.Pump(func(io.Writer, io.Writer) {}, func(error) {})
		require.True(t, d.AwaitOutput())
	})

	t.Run("ErrAwaitOutputGivesUpOnAStreamThatDoesNotEnd", func(t *testing.T) {
		t.Parallel()
		d := NewDialogRun(t.Context(), nil, io.Discard, func(string, ...any) {})
		d.drain = 50 * time.Millisecond
		release := make(chan struct{})
		d.Pump(func(io.Writer, io.Writer) { <-release }, func(error) {})
		require.False(t, d.AwaitOutput())
		close(release)
		<-d.Done()
	})
}
