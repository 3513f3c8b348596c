package ptyshell

import (
	"time"

	"github.com/gorilla/websocket"
)

// KeepAlive arms conn's read deadline pongWait ahead, moves it again at
// every ping and pong the peer sends, and answers a ping within writeWait.
// It returns what moves it, for the reader to call at every message: a
// peer silent for pongWait is gone. Both ends of a shell, and of an exec
// (wsexec), read under it.
func KeepAlive(conn *websocket.Conn, pongWait, writeWait time.Duration) (alive func()) {
	alive = func() { _ = conn.SetReadDeadline(time.Now().Add(pongWait)) } // a failure shows in the read
	alive()
	conn.SetPongHandler(func(string) error { alive(); return nil })
	conn.SetPingHandler(func(data string) error {
		alive()
		// A failed pong shows up in the next read or write.
		_ = conn.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(writeWait))
		return nil
	})
	return alive
}
