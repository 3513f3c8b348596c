// Package ptyshell is the interactive shell's wire protocol (PTYSHELL.md
// §4–§6) and its two halves.
//
//   - The frame codec: one binary websocket message is one type byte and a
//     payload; I/O payloads are raw bytes, control payloads a JSON object of
//     at most 4 KiB.
//   - [Serve], the server half: it bridges an upgraded websocket to a
//     [Stream] (the container's terminal), with one writer goroutine,
//     keepalive, idle and lifetime timers, bounded lossless flow control and
//     exactly one EXIT frame.
//   - [Session], the client half: frames over an already-dialled websocket.
//   - [Terminal], a Session bound to the local terminal: raw mode, resize on
//     SIGWINCH, the detach key, a cancellable stdin reader, and the terminal
//     restored on every path. It has the four methods of Bubble Tea's
//     ExecCommand, so the TUI can hand it to tea.Exec.
//
// The package imports the standard library, gorilla/websocket, x/term and
// x/sys only; never server/..., client, tui or Bubble Tea.
package ptyshell
