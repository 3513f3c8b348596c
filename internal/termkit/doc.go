// Package termkit is what the CLI (cmd/cairn) and the TUI (tui) both need
// to put a server's data on a terminal, written once so that the same value
// reads the same in both: sizes and ages, size parsing, a sanitiser for
// untrusted text, the retry schedules, and a transfer's rate and time left.
//
// It imports no Bubble Tea package, so the tea-free parts of the TUI
// (tui/live, tui/config) and the client may use it: only the standard
// library, github.com/docker/go-units, github.com/cenkalti/backoff/v5 and
// github.com/mattn/go-runewidth.
package termkit
