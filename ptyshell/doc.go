// Package ptyshell is the interactive shell's wire protocol (described in
// docs/protocols.md) and its two halves.
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
// # v2: cairn.ptyshell.v2
//
// [SubprotocolV2] keeps v1's frames and adds a shell apart from its
// connections; a v1 client (offering only cairn.ptyshell.v1) keeps v1
// exactly. The routes:
//
//   - POST /v1/workspaces/{id}/shells, scope shell, body
//     {"cols","rows","term"}: creates and starts the shell, detached. The
//     answer carries "shell_id" and "secret" (the resume secret, in this
//     body only — never a URL, a log line or an audit row; the server keeps
//     its SHA-256) and "detached_timeout_s".
//   - GET /v1/shells/{id}/attach?cols=&rows=, scope shell, websocket
//     offering cairn.ptyshell.v2, the secret in the Cairn-Shell-Secret
//     header: the writer. A new attach takes over: the old connection gets
//     EXIT taken_over (close 4003) and its input is dropped.
//   - GET /v1/shells/{id}/watch?cols=&rows=, scope shell, no secret (the
//     token decides; every watch is audited SHELL_WATCHED): read-only.
//     Its INPUT and RESIZE are never applied; the first of each is answered
//     with a non-fatal ERROR read_only. A watcher too slow to keep up gets
//     EXIT watcher_lagged (close 4004) so the writer never waits for it.
//
// Refusals come before the upgrade, as in v1: 401 shell_secret_required,
// 403 shell_secret_invalid, 404 shell_not_found, 409 shell_not_attachable
// (a v1 shell). STATUS carries "role" (writer or watcher). Each connection
// gets STATUS starting and running, then the [Screen]'s render as OUTPUT
// (a writer's size applied first), then live output. On disconnect the
// shell keeps running; detached_timeout after its writer left it ends
// (shell.timeouts.detachedSecs); idle and lifetime count across
// connections. [Hub] keeps such a shell; each connection is Serve over a
// [Tap] of it. The Hub runs in the shell's own container, in the session
// holder (package holder), which any server reaches and bridges its
// clients to.
//
// The package imports the standard library, gorilla/websocket, x/term and
// x/sys only; never server/..., client, tui or Bubble Tea.
package ptyshell
