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
)

func TestParseBytes(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{
		"0": 0, "1048576": 1 << 20, "512K": 512 << 10, "512k": 512 << 10, "16MiB": 16 << 20, "16MB": 16 << 20,
		"16m": 16 << 20, "1.5G": 3 << 29, "2GiB": 2 << 30, " 8M ": 8 << 20,
	} {
		got, err := parseBytes(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "fast", "-1", "1e9", "Inf", "NaN", "1T", "M", "99999999999G"} {
		_, err := parseBytes(bad)
		require.Error(t, err, bad)
	}
}

func TestHumanUnits(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 3_400_000: "3.2 MiB",
		100 << 20: "100 MiB", 12 << 30: "12 GiB", 5 << 40: "5.0 TiB"} {
		require.Equal(t, want, size(n), "%d", n)
	}
	now := time.Date(2026, 8, 14, 12, 0, 0, 0, time.UTC)
	for d, want := range map[time.Duration]string{-time.Second: "0s", 45 * time.Second: "45s", 3 * time.Minute: "3m",
		5 * time.Hour: "5h", 72 * time.Hour: "3d", 800 * 24 * time.Hour: "2y"} {
		require.Equal(t, want, age(now.Add(-d), now), "%v", d)
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

func TestClean(t *testing.T) {
	t.Parallel()
	require.Equal(t, "a?[31mred?", clean("a\x1b[31mred\x07", false))
	require.Equal(t, "two\nlines", clean("two\nlines", true))
	require.Equal(t, "two?lines", clean("two\nlines", false))
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
