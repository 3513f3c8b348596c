// Package wsexec is the wire protocol of `cairn exec`: one non-interactive
// command in a fresh container that mounts a workspace's volume, over one
// websocket, with no TTY, stdout and stderr kept apart, stdin streamed to
// its end of file and the command's exit status. It is anchored on
// Kubernetes' v5 exec protocol (v5.channel.k8s.io): one channel byte per
// message and a close signal that half-closes a stream. The package holds
// the codec, [Serve] (the server half, over a [Process]) and [Run] (the
// client half).
//
// # Handshake
//
//	GET {pathPrefix}/v1/workspaces/{workspaceID}/exec
//	Upgrade: websocket
//	Sec-WebSocket-Protocol: cairn.exec.v1
//	Authorization: Bearer <token>        (scope shell)
//	Cairn-Exec-Argv: <base64url, no padding, of a JSON array of strings>
//
// The argv travels in a header, not the query, because a URL is logged by
// proxies and an argv may hold secrets; and not in a first message, so that
// every refusal (a bad argv included) is an ordinary HTTP answer with the
// JSON envelope, before the upgrade, as for the shell. The argv is 1–256
// strings of valid UTF-8 without NUL, argv[0] not empty, at most 64 KiB of
// JSON; it runs as given, with no shell in between. The 101 must name
// cairn.exec.v1; a client refuses any other answer.
//
// # Frames
//
// Every message is binary: one channel byte, then the payload. A text
// message is a protocol error.
//
//	channel  direction        payload
//	0x00     client → server  stdin bytes, at most 32 KiB
//	0x01     server → client  stdout bytes, at most 32 KiB
//	0x02     server → client  stderr bytes, at most 32 KiB
//	0x03     server → client  status: {"exit_code":N,"reason":"…","message":"…"}
//	0x04     client → server  a signal for the command, by name (Signals)
//	0xFF     client → server  close: one byte, the channel closed (0x00: stdin EOF)
//
// close(0) is the half-close: the server closes the container's stdin,
// so `cat` sees its end of file, while stdout and stderr go on. Data on
// stdin after close(0), and a malformed close, are protocol errors. A
// zero-length message and an unknown channel are ignored, so the protocol
// can grow.
//
// The server sends all stdout and stderr, then exactly one status frame,
// then a close frame (1000 for exited and oom_killed; as for the shell,
// 4001 max_lifetime, 4005 timeout, 4002 terminated, 1001 server_shutdown,
// 1003/1008 protocol_error, 1011 error). A session that ends without a
// status frame ended with "connection lost", never status 0; `cairn exec`
// then exits 255. Status reasons: exited, oom_killed, max_lifetime,
// timeout, terminated, server_shutdown, protocol_error, error (exit code
// 125 when the command's own is unknown). The audit adds client_closed and
// client_gone.
//
// The optional Cairn-Exec-Options header (OptionsHeader) carries the
// working directory, added variables and a timeout; a signal frame a
// signal's name, which the server delivers to the command.
//
// # Flow control and limits
//
// Nothing is buffered without bound. The server writes each stdin frame to
// the container before it reads the next message, so a command that does
// not read its stdin stops the client's writes through TCP. It reads the
// command's output only as fast as the websocket takes it, each write
// bounded by the write deadline (10 s): a client that stops reading is
// dropped. The server reads messages of at most 64 KiB, the client at most
// 64 KiB too. Both ends ping every 20 s and count a peer silent for 60 s
// as gone; pings never extend the command's life, which is bounded by the
// maximum lifetime (shell.timeouts.maxLifetimeSecs). There is no idle end:
// a build may print nothing for an hour.
//
// # Stdin and the client
//
// [Run] streams its stdin reader in frames of at most 32 KiB and sends
// close(0) at its end of file (a nil reader: at once). It returns when the
// status arrives, even while a read of stdin is still blocked (a terminal
// that never reaches end of file, as with `docker exec -i`); that read is
// left to finish in its goroutine and what it returns is dropped.
package wsexec
