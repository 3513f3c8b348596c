package holder

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// CommandInstall is the holder's command that copies the running binary
// to a path: a Kubernetes shell pod's init container runs it from the
// sidecar image, which has no cp, to hand the holder to the shell's
// container through a shared volume.
const CommandInstall = "install-holder"

// Install copies the running executable to dest, read and execute only
// (0555). It writes a temporary file beside dest and renames it, so dest
// is either absent or whole: a shell container never runs half a binary.
func Install(dest string) error {
	if dest == "" {
		return errors.New("install-holder needs the destination path")
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the running binary: %w", err)
	}
	src, err := os.Open(self)
	if err != nil {
		return err
	}
	defer src.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone already once renamed
	if _, err := io.Copy(tmp, src); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("copy the binary: %w", err)
	}
	if err := tmp.Chmod(0o555); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dest)
}
