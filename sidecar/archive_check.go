package sidecar

import (
	"path"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bounds of an archive entry's name, as Linux has them.
const (
	maxNameComponent = 255
	maxNameBytes     = 4096
)

// quoteName renders an entry name for a message: quoted (it may hold any
// byte) and cut short.
func quoteName(raw string) string {
	const most = 160
	if len(raw) > most {
		return strconv.Quote(raw[:most]) + "…"
	}
	return strconv.Quote(raw)
}

func unsafePath(raw, why string) *failure {
	return fail(ReasonArchiveUnsafePath, "archive entry %s is refused: %s", quoteName(raw), why)
}

// cleanName checks an entry's name and returns it cleaned: "/"-separated,
// without "." components or a directory's one trailing "/"; "." is the
// archive's root. It refuses absolute names, drive letters, backslashes,
// ".." components, empty segments, components over 255 bytes or names over
// 4096, and names that are not UTF-8 or hold control characters.
func cleanName(raw string, dir bool) (string, *failure) {
	if f := checkText(raw); f != nil {
		return "", f
	}
	switch {
	case strings.HasPrefix(raw, "/"):
		return "", unsafePath(raw, "its name is an absolute path")
	case len(raw) >= 2 && raw[1] == ':' && isASCIILetter(raw[0]):
		return "", unsafePath(raw, "its name starts with a drive letter")
	case strings.Contains(raw, `\`):
		return "", unsafePath(raw, "its name holds a backslash")
	}
	name := raw
	if dir {
		name = strings.TrimSuffix(name, "/")
	}
	var kept []string
	for _, c := range strings.Split(name, "/") {
		switch {
		case c == "":
			return "", unsafePath(raw, "its name has an empty segment")
		case c == "..":
			return "", unsafePath(raw, "its name has a '..' component")
		case len(c) > maxNameComponent:
			return "", unsafePath(raw, "a component of its name is longer than 255 bytes")
		case c != ".":
			kept = append(kept, c)
		}
	}
	if len(kept) == 0 {
		return ".", nil
	}
	return strings.Join(kept, "/"), nil
}

// checkText refuses an empty or over-long name, one that is not UTF-8, or
// one holding a control character.
func checkText(raw string) *failure {
	if why := textProblem(raw); why != "" {
		return unsafePath(raw, why)
	}
	return nil
}

// textProblem says what makes a name one no unpack accepts, or "".
func textProblem(raw string) string {
	switch {
	case raw == "":
		return "its name is empty"
	case len(raw) > maxNameBytes:
		return "its name is longer than 4096 bytes"
	case !utf8.ValidString(raw):
		return "its name is not UTF-8"
	}
	for _, r := range raw {
		if r < 0x20 || (r >= 0x7f && r < 0xa0) {
			return "its name holds a control character"
		}
	}
	return ""
}

func isASCIILetter(b byte) bool { return b|0x20 >= 'a' && b|0x20 <= 'z' }

// tree is the archive as the checks know it: every cleaned name with what
// it is, directories no entry names included (kindImplicit), and the raw
// targets of its symlinks.
type tree struct {
	kinds map[string]entryKind
	links map[string]string
}

func newTree() *tree {
	return &tree{kinds: map[string]entryKind{".": kindDir}, links: map[string]string{}}
}

// add records an entry, refusing a name already taken (a directory no
// entry named may still be named once) and a parent chain that holds
// anything but directories. It returns the parents that were not known yet.
func (t *tree) add(raw, name string, k entryKind) ([]string, *failure) {
	if have, ok := t.kinds[name]; ok && (have != kindImplicit || k != kindDir) {
		return nil, unsafePath(raw, "another entry of the archive has the same name")
	}
	var fresh []string
	for i := 0; i < len(name); i++ {
		if name[i] != '/' {
			continue
		}
		parent := name[:i]
		switch t.kinds[parent] {
		case 0:
			t.kinds[parent] = kindImplicit
			fresh = append(fresh, parent)
		case kindDir, kindImplicit:
		default:
			return nil, unsafePath(raw, "its parent "+quoteName(parent)+" is not a directory of the archive")
		}
	}
	t.kinds[name] = k
	return fresh, nil
}

// addLink records a symlink and checks its target as far as the entries
// known so far allow; checkLinks repeats the check once all are known.
func (t *tree) addLink(raw, name, target string) ([]string, *failure) {
	fresh, f := t.add(raw, name, kindSymlink)
	if f != nil {
		return nil, f
	}
	t.links[name] = target
	return fresh, t.checkLink(name, target)
}

// checkLinks checks every symlink against the whole archive.
func (t *tree) checkLinks() *failure {
	for name, target := range t.links {
		if f := t.checkLink(name, target); f != nil {
			return f
		}
	}
	return nil
}

// checkLink refuses a symlink whose target is absolute or leaves the
// unpacked tree. The raw target is walked from the link's directory: ".."
// pops, and passing through another symlink of the archive is refused,
// since what that one points at is not where the words say: with `x -> .`,
// `y -> x/..` stays inside lexically but lands above the tree. Landing on
// a symlink is fine: that one is checked from where it stands.
func (t *tree) checkLink(name, target string) *failure {
	switch {
	case target == "":
		return unsafePath(name, "it is a symlink to nothing")
	case len(target) > maxNameBytes || strings.ContainsRune(target, 0):
		return unsafePath(name, "its symlink target is not a path")
	case strings.HasPrefix(target, "/"):
		return unsafePath(name, "it is a symlink to an absolute path")
	}
	var at []string
	if dir := path.Dir(name); dir != "." {
		at = strings.Split(dir, "/")
	}
	var steps []string
	for _, c := range strings.Split(target, "/") {
		if c != "" && c != "." {
			steps = append(steps, c)
		}
	}
	for i, c := range steps {
		if c == ".." {
			if len(at) == 0 {
				return unsafePath(name, "it is a symlink leading out of the unpacked directory")
			}
			at = at[:len(at)-1]
			continue
		}
		at = append(at, c)
		if i < len(steps)-1 && t.kinds[strings.Join(at, "/")] == kindSymlink {
			return unsafePath(name, "it is a symlink through another symlink of the archive")
		}
	}
	return nil
}

// addHardlink records a hard link, whose target must be an earlier
// regular file of this archive.
func (t *tree) addHardlink(raw, name, linkRaw string) (string, []string, *failure) {
	old, f := cleanName(linkRaw, false)
	if f != nil {
		return "", nil, unsafePath(raw, "its hard link target "+quoteName(linkRaw)+" is not a safe name")
	}
	if t.kinds[old] != kindFile {
		return "", nil, unsafePath(raw, "it is a hard link to "+quoteName(linkRaw)+", which is not an earlier regular file of the archive")
	}
	fresh, f := t.add(raw, name, kindHardlink)
	return old, fresh, f
}

// limits are an unpack's bounds.
type limits struct {
	size    int64 // archive bytes
	entries int
	bytes   int64 // unpacked bytes
	ratio   int64 // unpacked bytes per archive byte
}

// ratioFloor is how much must be unpacked before the ratio is judged: a
// small file of zeros compresses far past any ratio and harms no one.
const ratioFloor = 1 << 20

// budget counts an unpack against its limits: the bytes entries declare
// before any is written, the bytes really written as they go. packed
// reports the archive bytes read so far (tar.gz) or the archive's size
// (zip).
type budget struct {
	lim      limits
	entries  int
	declared int64
	written  int64
	packed   func() int64
}

// entry counts one more entry.
func (b *budget) entry() *failure {
	if b.entries++; b.entries > b.lim.entries {
		return fail(ReasonArchiveTooLarge, "the archive holds more than %d entries", b.lim.entries)
	}
	return nil
}

// reserve counts the n bytes an entry declares, before any is written.
func (b *budget) reserve(n int64) *failure {
	if n < 0 || n > b.lim.bytes-b.declared {
		return fail(ReasonArchiveTooLarge, "the archive unpacks to more than %d bytes", b.lim.bytes)
	}
	b.declared += n
	return nil
}

// wrote counts n bytes written and judges the ratio so far.
func (b *budget) wrote(n int64) *failure {
	b.written += n
	return b.ratioOK(b.written)
}

// ratioOK judges unpacked bytes against the archive's.
func (b *budget) ratioOK(unpacked int64) *failure {
	if unpacked <= ratioFloor {
		return nil
	}
	if packed := b.packed(); float64(unpacked) > float64(b.lim.ratio)*float64(packed) {
		return fail(ReasonArchiveRatio, "the archive unpacks to more than %d times its %d bytes", b.lim.ratio, packed)
	}
	return nil
}
