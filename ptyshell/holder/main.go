package holder

import (
	"context"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// Main runs the holder of the container's environment: it reads and drops
// its configuration and key, makes itself non-dumpable (so the shell, under
// the same user, cannot read the key from /proc), listens on the socket
// (mode 0600) and runs until the shell's end was collected.
func Main(ctx context.Context) error {
	cfg, key, err := Load()
	if err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return err
	}
	h, err := New(cfg, key)
	if err != nil {
		return err
	}
	ln, err := listen(ctx, h.cfg.Socket)
	if err != nil {
		return err
	}
	defer ln.Close()
	return h.Run(ctx, ln)
}

func listen(ctx context.Context, socket string) (net.Listener, error) {
	_ = os.Remove(socket) // a socket left by an earlier run of this container
	ln, err := (&net.ListenConfig{}).Listen(ctx, "unix", socket)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(socket, 0o600); err != nil {
		_ = ln.Close()
		return nil, err
	}
	return ln, nil
}
