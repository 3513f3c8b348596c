package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
)

func TestRateFlag(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want int64
	}{{"1048576", 1 << 20}, {"512K", 512 << 10}, {"16MiB", 16 << 20}, {"16MB", 16 << 20}, {" 8m ", 8 << 20}} {
		var r rateFlag
		require.NoError(t, r.Set(c.in), c.in)
		require.Equal(t, c.want, r.bytes, c.in)
		require.Equal(t, fmt.Sprint(c.want), r.String())
	}
	for _, bad := range []string{"", "fast", "-1", "1e9", "99999999999G"} {
		var r rateFlag
		require.EqualError(t, r.Set(bad), "expected bytes per second, like 1048576, 512K or 16MiB", bad)
	}
}

func TestTableFits(t *testing.T) {
	t.Parallel()
	tb := table{headers: []string{"NAME", "ID", "AGE"}, rows: [][]string{
		{strings.Repeat("n", 100), "01M8RGNFXWEAPAMN68K2XAD9BD", "3d"},
		{"short", "01M8RGNFXWEAPAMN68K2XAD9BE", "12m"},
	}}
	var out bytes.Buffer
	tb.write(&out, 60)
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 3)
	for _, l := range lines {
		require.LessOrEqual(t, len([]rune(l)), 60, "%q", l)
	}
	require.Equal(t, strings.Index(lines[0], "ID"), strings.Index(lines[2], "01M8"), "columns align")
	require.Contains(t, lines[1], "…", "the name gives way")
	require.Equal(t, "short", strings.Fields(lines[2])[0])
}

func TestDescribeText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   *string
		want string
	}{
		{nil, "-"},
		{ptr("two\nlines\n"), "two\nlines"},
		{ptr("a\x1b[31mred\x07\r\nnext"), "a^[[31mred^G\nnext"},
		{ptr("\u202eevil"), `\u202eevil`},
	} {
		require.Equal(t, c.want, describeText(c.in))
	}
}

func ptr(s string) *string { return &s }

// The bar is labelled by the client's phase; a new phase starts the meter
// over, so the upload after a fast hash pass has its own rate and ETA.
func TestBar(t *testing.T) {
	t.Parallel()
	const (
		hash = client.PhaseHashing
		up   = client.PhaseUploading
		down = client.PhaseDownloading
	)
	start := time.Date(2026, 8, 14, 12, 0, 0, 0, time.UTC)
	type sample struct {
		phase client.Phase
		done  int64
		ms    int64 // after start
	}
	cases := []struct {
		name    string
		samples []sample
		want    string // the last line drawn
	}{
		{"HashStarts", []sample{{hash, 0, 0}},
			"hashing f [.................................]   0%  0 B/32.0 MiB  0 B/s  ETA --"},
		{"HashRateAndETA", []sample{{hash, 0, 0}, {hash, 8 << 20, 1000}},
			"hashing f [######...................]  25%  8.0 MiB/32.0 MiB  8.0 MiB/s  ETA 3s"},
		{"HashDone", []sample{{hash, 0, 0}, {hash, 16 << 20, 1000}, {hash, 32 << 20, 2000}},
			"hashing f [#######################] 100%  32.0 MiB/32.0 MiB  16.0 MiB/s  ETA --"},
		{"UploadStartsOver", []sample{{hash, 0, 0}, {hash, 32 << 20, 500}, {up, 0, 500}},
			"uploading f [...............................]   0%  0 B/32.0 MiB  0 B/s  ETA --"},
		{"UploadHasItsOwnRate", []sample{{hash, 0, 0}, {hash, 32 << 20, 500}, {up, 0, 500}, {up, 8 << 20, 1500}},
			"uploading f [#####..................]  25%  8.0 MiB/32.0 MiB  8.0 MiB/s  ETA 3s"},
		{"Download", []sample{{down, 0, 0}, {down, 8 << 20, 1000}},
			"downloading f [#####................]  25%  8.0 MiB/32.0 MiB  8.0 MiB/s  ETA 3s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			var at time.Time
			b := &bar{w: &out, width: 80, name: "f", now: func() time.Time { return at }}
			for _, s := range c.samples {
				at = start.Add(time.Duration(s.ms) * time.Millisecond)
				b.update(s.phase, s.done, 32<<20)
			}
			b.end()
			draws := strings.Split(strings.TrimSuffix(out.String(), "\x1b[K\n"), "\x1b[K")
			require.Len(t, draws, len(c.samples), "one line per report")
			require.Equal(t, "\r"+c.want, draws[len(draws)-1])
		})
	}
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	for err, want := range map[error]exitError{
		errors.New("local"): exitFailed,
		usagef("bad"):       exitUsage,
		&cairn.Error{Reason: cairn.ReasonWorkspaceNotFound, Status: 404}: exitNotFound,
		&cairn.Error{Reason: cairn.ReasonNameTaken, Status: 409}:         exitConflict,
		&cairn.Error{Reason: cairn.ReasonUnauthenticated, Status: 401}:   exitNotAllowed,
		&cairn.Error{Reason: cairn.ReasonForbidden, Status: 403}:         exitNotAllowed,
		&cairn.Error{Reason: cairn.ReasonStoreUnavailable, Status: 502}:  exitUnavailable,
		&cairn.Error{Reason: cairn.ReasonWorkspaceBusy, Status: 503}:     exitUnavailable,
		&cairn.Error{Reason: cairn.ReasonSidecarTimeout, Status: 504}:    exitUnavailable,
		&cairn.Error{Reason: cairn.ReasonSourceNotFound, Status: 400}:    exitFailed,
		&cairn.Error{Reason: cairn.ReasonObjectMissing}:                  exitConflict,
		&cairn.Error{Reason: cairn.ReasonStoreUnavailable}:               exitUnavailable,
		fmt.Errorf("wrapped: %w", &cairn.Error{Status: 404}):             exitNotFound,
		context.Canceled: exitFailed,
	} {
		require.Equal(t, want, exitCodeOf(err), "%v", err)
		var code exitError
		require.ErrorAs(t, failure(err), &code, "main finds the code")
		require.Equal(t, want, code)
	}
}
