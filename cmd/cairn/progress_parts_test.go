package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/client"
)

// A transfer in parts shows its parts done after the bytes; the hash pass
// of a resume does not. A notice goes above the bar, which is drawn again.
func TestBarParts(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	at := time.Date(2026, 8, 14, 12, 0, 0, 0, time.UTC)
	b := &bar{w: &out, width: 100, name: "f", now: func() time.Time { return at }}
	b.setParts(1, 4)
	b.update(client.PhaseHashing, 0, 32<<20)
	require.NotContains(t, b.last, "parts", "hashing the stored parts")
	b.update(client.PhaseUploading, 8<<20, 32<<20)
	require.True(t, strings.HasSuffix(b.last, "  25%  8.0 MiB/32.0 MiB  0 B/s  ETA --  parts 1/4"), b.last)
	b.setParts(2, 4)
	at = at.Add(time.Second)
	b.update(client.PhaseUploading, 16<<20, 32<<20)
	require.True(t, strings.HasSuffix(b.last, "  parts 2/4"), b.last)

	out.Reset()
	b.interject("resumed: 2 of 4 parts already stored")
	require.Equal(t, "\rresumed: 2 of 4 parts already stored\x1b[K\n\r"+b.last+"\x1b[K", out.String())
	b.end()
}

// On a terminal the bar of a multipart upload counts its parts; Ctrl-C
// leaves the upload to resume, and the same command run again says how
// much the store kept.
func TestCLIPartsOnTerminal(t *testing.T) {
	t.Parallel()
	s := startCLIServer(t)
	dir := t.TempDir()
	wsName := uniqueName("parts")
	s.ok(t, "ws", "create", wsName)
	src, sum := randomFile(t, dir, "payload", 100<<20)

	p := s.onTerminal(t, "art", "upload", wsName, src, "--rate-limit", "32MiB", "--multipart-above", "64MiB", "--parallel", "1")
	p.waitFor(t, regexp.MustCompile(`uploading payload \[#*\.+\] +\d+%  [\d.]+ MiB/100\.0 MiB .* parts 1/2`))
	require.Equal(t, 1, p.interrupt(t), "output: %s", p.output())

	r := s.ok(t, "art", "upload", wsName, src, "-o", "json") // no flag: an interrupted upload resumes in parts anyway
	require.Regexp(t, `resumed: [12] of 2 parts already stored`, r.stderr)
	a := field[struct {
		SHA256B64 string `json:"sha256_b64"`
	}](t, decodeOne(t, r.stdout), "artifact")
	require.Equal(t, sum, a.SHA256B64)
}
