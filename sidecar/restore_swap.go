package sidecar

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"
)

// A restore swaps the mount root's entries, which it cannot do in one
// rename: the root is the volume's mount point. It works through
// directories at the root named by its id, 32 random lower-case hex
// digits, each name telling how far it got:
//
//	.cairn-restore.<id>      the new tree, being built: not committed
//	.cairn-swap.<id>         the new tree, complete: the restore is committed
//	.cairn-old-partial.<id>  the old root entries, being moved in
//	.cairn-old.<id>          the old root entries, all of them
//	.cairn-done.<id>         the swap directory once emptied into the root;
//	                         it keeps the new root's owner and mode
//
// The steps: build the staging directory; rename it to the swap directory
// (the commit); make the old-partial directory and move every other root
// entry into it; rename it to old; move every entry of the swap directory
// to the root; rename the swap directory to done; remove old; give the
// root the owner and mode of done, remove done, give the root its mtime.
// A restore killed at any step leaves names from which the next one
// finishes it (recoverRestores) before doing anything else: a staging
// directory is removed, anything committed is carried through. Only the
// root's mtime can be lost, when the kill comes after the swap directory
// was emptied: only the manifest says it.
const (
	restoreStaging    = ".cairn-restore."
	restoreSwap       = ".cairn-swap."
	restoreOldPartial = ".cairn-old-partial."
	restoreOld        = ".cairn-old."
	restoreDone       = ".cairn-done."
)

var restorePrefixes = []string{restoreStaging, restoreSwap, restoreOldPartial, restoreOld, restoreDone}

// restoreIDLen is the length of a restore's id in hex digits.
const restoreIDLen = 32

// restoreNameOf splits a name a restore uses into its prefix and id; ok is
// false for every other name.
func restoreNameOf(name string) (prefix, id string, ok bool) {
	for _, p := range restorePrefixes {
		if rest, found := strings.CutPrefix(name, p); found && isRestoreID(rest) {
			return p, rest, true
		}
	}
	return "", "", false
}

// isRestoreName reports a root entry that is a restore's own: a snapshot
// does not record it, a manifest may not name it.
func isRestoreName(name string) bool {
	_, _, ok := restoreNameOf(name)
	return ok
}

func isRestoreID(s string) bool { return len(s) == restoreIDLen && isLowerHex(s) }

// errStopped ends a swap where a test's stop hook asked, as a kill would.
var errStopped = errors.New("stopped")

// swap carries a committed restore through to the end, from whichever
// step it stands at. It never reads stdin: once committed, a restore
// finishes even when the server is gone.
type swap struct {
	root *os.Root // the mount root
	dir  int      // the mount root's descriptor
	id   string
	// mtime is the root's, from the manifest; nil when a later restore
	// finishes this one and no longer knows it.
	mtime *int64
	// stop, in tests, stops the swap after the named step.
	stop func(step string) bool
}

func (s *swap) name(prefix string) string { return prefix + s.id }

// at reports the end of a step to the test's hook.
func (s *swap) at(step string) error {
	if s.stop != nil && s.stop(step) {
		return errStopped
	}
	return nil
}

func (s *swap) exists(prefix string) (bool, error) {
	_, err := lstatAt(s.dir, s.name(prefix))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// run finishes the swap from the step the names on disk tell.
func (s *swap) run() error {
	done, err := s.exists(restoreDone)
	if err != nil {
		return err
	}
	if !done {
		if err := s.exchange(); err != nil {
			return err
		}
	}
	if err := s.dropOld(); err != nil {
		return err
	}
	return s.finish()
}

// exchange moves the old entries aside and the new ones in, then renames
// the swap directory to done.
func (s *swap) exchange() error {
	old, err := s.exists(restoreOld)
	if err != nil {
		return err
	}
	if !old {
		if err := s.moveAside(); err != nil {
			return err
		}
	}
	if err := s.moveIn(); err != nil {
		return err
	}
	if err := syscall.Renameat(s.dir, s.name(restoreSwap), s.dir, s.name(restoreDone)); err != nil {
		return err
	}
	return s.at("done")
}

// moveAside moves every root entry but the restore's own into the
// old-partial directory, then renames it old.
func (s *swap) moveAside() error {
	err := syscall.Mkdirat(s.dir, s.name(restoreOldPartial), stagingMode)
	if err != nil && !errors.Is(err, syscall.EEXIST) {
		return err
	}
	if err := s.at("old-partial"); err != nil {
		return err
	}
	names, err := listNames(s.dir, ".")
	if err != nil {
		return err
	}
	aside, err := openDirNoFollow(s.dir, s.name(restoreOldPartial))
	if err != nil {
		return err
	}
	defer syscall.Close(aside)
	for _, n := range names {
		if _, id, ours := restoreNameOf(n); ours && id == s.id {
			continue
		}
		if err := moveName(s.dir, n, aside); err != nil && !errors.Is(err, syscall.ENOENT) {
			return err
		}
		if err := s.at("aside"); err != nil {
			return err
		}
	}
	if err := syscall.Renameat(s.dir, s.name(restoreOldPartial), s.dir, s.name(restoreOld)); err != nil {
		return err
	}
	return s.at("old")
}

// moveIn moves every entry of the swap directory to the root.
func (s *swap) moveIn() error {
	names, err := listNames(s.dir, s.name(restoreSwap))
	if err != nil {
		return err
	}
	from, err := openDirNoFollow(s.dir, s.name(restoreSwap))
	if err != nil {
		return err
	}
	defer syscall.Close(from)
	for _, n := range names {
		if err := moveName(from, n, s.dir); err != nil {
			return err
		}
		if err := s.at("in"); err != nil {
			return err
		}
	}
	return nil
}

// dropOld removes the old entries, never following a symlink among them.
func (s *swap) dropOld() error {
	if err := s.root.RemoveAll(s.name(restoreOld)); err != nil {
		return err
	}
	return s.at("old-removed")
}

// finish gives the root the owner and mode the done directory kept, then
// its mtime once nothing more changes in it: removing done is the last
// change.
func (s *swap) finish() error {
	st, err := lstatAt(s.dir, s.name(restoreDone))
	if err != nil {
		return err
	}
	if err := setDirOwnerMode(s.dir, "", st.Mode&0o7777, int(st.Uid), int(st.Gid)); err != nil {
		return err
	}
	if err := removeAt(s.dir, s.name(restoreDone), atRemoveDir); err != nil {
		return err
	}
	if s.mtime == nil {
		return nil
	}
	return setTimes(s.dir, "", time.Unix(0, *s.mtime))
}

// moveName renames name from the directory from to the directory to,
// refusing to replace anything there.
func moveName(from int, name string, to int) error {
	err := renameExclusive(from, name, to, name)
	if errors.Is(err, errNoReplaceUnsupported) {
		if _, err := lstatAt(to, name); err == nil {
			return syscall.EEXIST
		}
		err = syscall.Renameat(from, name, to, name)
	}
	return err
}

// listNames lists the directory name in dirfd, never through a symlink.
func listNames(dirfd int, name string) ([]string, error) {
	fd, err := openDirNoFollow(dirfd, name)
	if err != nil {
		return nil, err
	}
	dir := os.NewFile(uintptr(fd), name)
	defer dir.Close()
	var names []string
	for {
		chunk, err := dir.Readdirnames(1024)
		names = append(names, chunk...)
		if errors.Is(err, io.EOF) {
			return names, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// setDirOwnerMode gives the directory name in dirfd (dirfd itself for "")
// its mode, then its owner. In that order: chmod keeps the set-gid bit
// only for a member of the directory's group (or with CAP_FSETID, which a
// restore lacks), and a chown never clears a directory's bits. The
// directory first gets the restore's own group when it must keep set-gid.
func setDirOwnerMode(dirfd int, name string, mode uint32, uid, gid int) error {
	fd := dirfd
	if name != "" {
		var err error
		if fd, err = openDirNoFollow(dirfd, name); err != nil {
			return err
		}
		defer syscall.Close(fd)
	}
	if mode&syscall.S_ISGID != 0 {
		if err := syscall.Fchown(fd, -1, os.Getegid()); err != nil {
			return err
		}
	}
	if err := syscall.Fchmod(fd, mode); err != nil {
		return err
	}
	return syscall.Fchown(fd, uid, gid)
}

// recoverRestores finishes, or clears away, what earlier restores left at
// the mount root: a staging directory is removed (that restore never
// committed), a committed swap is carried through. Two committed swaps
// cannot be told apart in time and are refused.
func recoverRestores(root *os.Root, dirfd int) *failure {
	names, err := listNames(dirfd, ".")
	if err != nil {
		return recoverFailure(err)
	}
	found := map[string]map[string]bool{} // id: prefixes
	for _, n := range names {
		prefix, id, ok := restoreNameOf(n)
		if !ok {
			continue
		}
		if dir, err := isDirAt(dirfd, n); err != nil || !dir {
			// No restore makes anything but a directory: whatever else
			// took the name goes, as it would go with the old entries.
			if err == nil {
				err = removeAt(dirfd, n, 0)
			}
			if err != nil {
				return recoverFailure(err)
			}
			continue
		}
		if found[id] == nil {
			found[id] = map[string]bool{}
		}
		found[id][prefix] = true
	}
	var committed []string
	for id, has := range found {
		if has[restoreStaging] {
			if err := root.RemoveAll(restoreStaging + id); err != nil {
				return recoverFailure(err)
			}
		}
		if has[restoreSwap] || has[restoreDone] {
			committed = append(committed, id)
		}
	}
	if len(committed) > 1 {
		return fail(ReasonWriteFailed, "the volume holds %d interrupted restores; cairn cannot tell which came last", len(committed))
	}
	for _, id := range committed {
		if err := (&swap{root: root, dir: dirfd, id: id}).run(); err != nil {
			return recoverFailure(err)
		}
	}
	for id, has := range found {
		if err := clearLeftovers(root, dirfd, id, has, len(committed) > 0 && committed[0] == id); err != nil {
			return recoverFailure(err)
		}
	}
	return nil
}

// clearLeftovers handles what no committed swap explains: an old
// directory whose swap finished is removed; an old-partial one without its
// swap (which no restore leaves) is moved back, since what it holds was
// the volume's.
func clearLeftovers(root *os.Root, dirfd int, id string, has map[string]bool, finished bool) error {
	if finished {
		return nil
	}
	if has[restoreOld] {
		if err := root.RemoveAll(restoreOld + id); err != nil {
			return err
		}
	}
	if !has[restoreOldPartial] {
		return nil
	}
	names, err := listNames(dirfd, restoreOldPartial+id)
	if err != nil {
		return err
	}
	from, err := openDirNoFollow(dirfd, restoreOldPartial+id)
	if err != nil {
		return err
	}
	defer syscall.Close(from)
	for _, n := range names {
		if err := moveName(from, n, dirfd); err != nil {
			return err
		}
	}
	return removeAt(dirfd, restoreOldPartial+id, atRemoveDir)
}

// isDirAt reports whether name in dirfd is a directory, not following it.
func isDirAt(dirfd int, name string) (bool, error) {
	st, err := lstatAt(dirfd, name)
	if err != nil {
		return false, err
	}
	return st.Mode&syscall.S_IFMT == syscall.S_IFDIR, nil
}

func recoverFailure(err error) *failure {
	return writeFailure(err, "cannot finish an earlier restore of the volume: %s", errno(err))
}
