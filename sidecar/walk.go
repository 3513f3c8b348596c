package sidecar

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxLinks bounds symlink expansion, as the kernel does.
const maxLinks = 40

// errLinkLoop reports a path with too many symlinks to resolve.
var errLinkLoop = errors.New("too many levels of symbolic links")

// resolvePath follows every symlink of the absolute path p, like
// filepath.EvalSymlinks, but a missing component does not stop it: the
// rest is appended as written and exists reports false. So a link into
// nowhere is still judged by where it points — a link to /etc/passwd is
// outside the mount even in a container that has no /etc.
func resolvePath(p string) (resolved string, exists bool, err error) {
	resolved = "/"
	rest := strings.Split(p, "/")
	links := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return filepath.Join(append([]string{next}, rest...)...), false, nil
		}
		if err != nil {
			return "", false, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if links++; links > maxLinks {
			return "", false, errLinkLoop
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", false, err
		}
		if filepath.IsAbs(target) {
			resolved = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return resolved, true, nil
}
