package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/termkit"
)

// volumePaths is the help text on the PATH of the fs commands.
const volumePaths = `PATH is a path of the workspace volume as every container that mounts it
sees it: absolute, under ` + cairn.MountPath + `, or relative, and then taken
relative to ` + cairn.MountPath + ` ('src/main.go' is ` + cairn.MountPath + `/src/main.go).
Symlinks are reported, never followed. Each command runs in a sidecar of the
workspace, so its volume must be set up ('cairn ws setup').`

func newFilesCommand(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fs",
		Short: "Read, search and change a workspace volume's files without a shell (WS is a workspace name or ID)",
		Long: "fs lists, reads, searches and changes the files of a workspace volume.\n\n" + volumePaths + `

Whole files leave through an artifact: 'cairn art save WS PATH' (a directory
with --format tar.gz or zip), then 'cairn art download'; files larger than a
put takes come in through one: 'cairn art upload', then 'cairn art load'.`,
		Args: usage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(fsList(c), fsStat(c), fsCat(c), fsTree(c), fsGrep(c), fsFind(c),
		fsPut(c), fsMakeDir(c), fsMove(c), fsRemove(c), fsWatch(c))
	return cmd
}

// volumePath takes a relative PATH relative to the mount, and cleans it
// as the server would.
func volumePath(p string) string {
	if strings.HasPrefix(p, "/") {
		return path.Clean(p)
	}
	return path.Join(cairn.MountPath, p)
}

// maxListEntries bounds what ls gathers of one directory: about 15 MB of
// JSON, and a hundred pages.
const maxListEntries = 100_000

func fsList(c *cli) *cobra.Command {
	var long bool
	cmd := &cobra.Command{
		Use:   "ls WS [PATH] [--long]",
		Short: "List a directory of the workspace volume (default its root, " + cairn.MountPath + ")",
		Long: `ls lists the directory PATH in byte order of names, paging through all of it
(at most 100 000 entries; past that it says so on stderr, and -o json's
next_after names where the rest starts). A PATH that is no directory lists as
its one entry.

-o table (the default on a terminal) prints a name a line, a directory's with
a trailing '/'; --long adds mode, size and modification time, and a symlink's
target. -o json prints one listing with every entry; -o name the names alone.
Control characters of a name show as visible escapes ('^[') in a table, and
with -o name on a terminal.

` + volumePaths,
		Args:              usage(cobra.RangeArgs(1, 2)),
		ValidArgsFunction: c.completeWorkspaces,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			p := pathArg(args, 1)
			id, err := workspaceID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			entries, truncated, err := cl.ListAllFiles(cmd.Context(), id, p, maxListEntries)
			if err != nil {
				return err
			}
			l := &cairn.FileListing{Path: p, Entries: entries}
			if l.Entries == nil {
				l.Entries = []cairn.FileEntry{}
			}
			if truncated {
				l.NextAfter = entries[len(entries)-1].Name
				c.note("listed the first %s entries of %s; more remain after '%s'",
					termkit.Count(int64(len(entries))), termkit.Sanitize(l.Path), termkit.Sanitize(l.NextAfter))
			}
			return c.emit(listingView(l, long, c.nameText()))
		}),
	}
	// Not -l: the root's --log-level holds that shorthand for every command.
	cmd.Flags().BoolVar(&long, "long", false, "mode, size and modification time too, as ls -l")
	return cmd
}

// nameText is how -o name writes a remote name: as it is into a pipe,
// where a script wants it exact, and sanitised on a terminal.
func (c *cli) nameText() func(string) string {
	if isTerminal(c.stdout) {
		return termkit.Sanitize
	}
	return func(s string) string { return s }
}

// timeLayout is the modification time of --long and stat, in UTC.
const timeLayout = "2006-01-02 15:04:05"

func listingView(l *cairn.FileListing, long bool, name func(string) string) view {
	v := view{payload: l}
	for _, e := range l.Entries {
		v.names = append(v.names, name(e.Name))
	}
	if !long {
		v.table = func(w io.Writer, _ int) {
			for _, e := range l.Entries {
				fmt.Fprintln(w, shortName(e))
			}
		}
		return v
	}
	t := table{headers: []string{"MODE", "SIZE", "MODIFIED (UTC)", "NAME"}, flex: 3}
	for _, e := range l.Entries {
		t.rows = append(t.rows, []string{lsMode(e.Type, e.Mode), termkit.Size(e.Size),
			e.MTime.UTC().Format(timeLayout), longName(e)})
	}
	// A listing's names are its point: never cut to the screen.
	v.table = func(w io.Writer, _ int) { t.write(w, math.MaxInt32) }
	return v
}

// shortName is a name as ls prints it, a directory's with a trailing '/'.
func shortName(e cairn.FileEntry) string {
	if e.Type == cairn.FileTypeDir {
		return termkit.Sanitize(e.Name) + "/"
	}
	return termkit.Sanitize(e.Name)
}

// longName is a name as ls -l prints it, a symlink's with its target.
func longName(e cairn.FileEntry) string {
	if e.LinkTarget != nil {
		return termkit.Sanitize(e.Name) + " -> " + termkit.Sanitize(*e.LinkTarget)
	}
	return termkit.Sanitize(e.Name)
}

// lsMode renders an entry's type and its four octal mode digits as ls -l
// does: "drwxr-xr-x", "-rwsr-xr-x", "drwxrwxrwt"; "?" for a type the
// listing calls other. A mode that is not octal shows as it came.
func lsMode(typ, mode string) string {
	bits, err := strconv.ParseUint(mode, 8, 32)
	if err != nil || bits > 0o7777 {
		return termkit.Sanitize(mode)
	}
	b := []byte("?rwxrwxrwx")
	switch typ {
	case cairn.FileTypeFile:
		b[0] = '-'
	case cairn.FileTypeDir:
		b[0] = 'd'
	case cairn.FileTypeSymlink:
		b[0] = 'l'
	}
	for i := range 9 {
		if bits&(1<<(8-i)) == 0 {
			b[i+1] = '-'
		}
	}
	special := func(bit uint64, at int, exec, noExec byte) {
		switch {
		case bits&bit == 0:
		case b[at] == 'x':
			b[at] = exec
		default:
			b[at] = noExec
		}
	}
	special(0o4000, 3, 's', 'S')
	special(0o2000, 6, 's', 'S')
	special(0o1000, 9, 't', 'T')
	return string(b)
}

func fsStat(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:   "stat WS PATH",
		Short: "Show one file of the workspace volume: type, size, mode, modification time, link target",
		Long: `stat shows the entry of PATH, whatever its type, as its directory lists it
(the mount root's too). -o json prints {"path", "entry"}, -o name the path.

` + volumePaths,
		Args:              usage(cobra.ExactArgs(2)),
		ValidArgsFunction: c.completeWorkspaces,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			p := volumePath(args[1])
			if p != cairn.MountPath {
				if err := cairn.ValidateVolumePath(p); err != nil {
					return err
				}
			}
			id, err := workspaceID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			e, err := cl.StatFile(cmd.Context(), id, p)
			if err != nil {
				return err
			}
			return c.emit(statView(p, &e.FileEntry, c.nameText()))
		}),
	}
}

func statView(p string, e *cairn.FileEntry, name func(string) string) view {
	payload := struct {
		Path  string           `json:"path"`
		Entry *cairn.FileEntry `json:"entry"`
	}{p, e}
	return view{payload: payload, names: []string{name(p)}, table: func(w io.Writer, width int) {
		f := fields{{"Path", termkit.Sanitize(p)}, {"Type", termkit.Sanitize(e.Type)}}
		f = append(f, [2]string{"Size", termkit.Size(e.Size) + " (" + termkit.Count(e.Size) + " bytes)"},
			[2]string{"Mode", termkit.Sanitize(e.Mode) + " (" + lsMode(e.Type, e.Mode) + ")"},
			[2]string{"Modified", termkit.Stamp(time.Now(), e.MTime)})
		if e.LinkTarget != nil {
			f = append(f, [2]string{"Link target", termkit.Sanitize(*e.LinkTarget)})
		}
		if e.ETag != "" {
			f = append(f, [2]string{"ETag", termkit.Sanitize(e.ETag)})
		}
		f.write(w, width)
	}}
}

func fsCat(c *cli) *cobra.Command {
	var offset, length int64
	var force bool
	cmd := &cobra.Command{
		Use:   "cat WS PATH [--offset N] [--length N]",
		Short: "Write a file of the workspace volume to stdout, 1 MiB a read",
		Long: `cat writes the bytes of the regular file PATH from --offset (default 0), all
of them or --length, reading 1 MiB at a time (never holding more). To a
terminal it writes only text: bytes that are not UTF-8, a NUL, or a control
character other than tab, newline and carriage return (ESC, which drives the
terminal, among them) stop it, before they are written, unless --force. -o
does not apply.

` + volumePaths,
		Args:              usage(cobra.ExactArgs(2)),
		ValidArgsFunction: c.completeWorkspaces,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			if offset < 0 || cmd.Flags().Changed("length") && length < 1 {
				return usagef("--offset must not be negative, and --length must be positive")
			}
			id, err := workspaceID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			r := fileReader{cl: cl, wsID: id, path: volumePath(args[1]), offset: offset, left: -1}
			if cmd.Flags().Changed("length") {
				r.left = length
			}
			if isTerminal(c.stdout) && !force {
				r.gate = &textGate{skipLead: offset > 0}
			}
			return r.copyTo(cmd.Context(), c.stdout)
		}),
	}
	cmd.Flags().Int64Var(&offset, "offset", 0, "first byte to read")
	cmd.Flags().Int64Var(&length, "length", 0, "bytes to read (default: to the end of the file)")
	cmd.Flags().BoolVar(&force, "force", false, "write binary bytes and control characters to a terminal too")
	return cmd
}

// fileReader reads a volume file one read at a time.
type fileReader struct {
	cl     *client.Client
	wsID   string
	path   string
	offset int64
	left   int64     // bytes still wanted; -1 for the rest of the file
	gate   *textGate // checks each read before it is written, when set
}

// copyTo writes the file to w until the end of the file, or of the range:
// a read shorter than asked, or the file's size reached.
func (r *fileReader) copyTo(ctx context.Context, w io.Writer) error {
	for r.left != 0 {
		want := int64(cairn.MaxFileReadBytes)
		if r.left > 0 {
			want = min(want, r.left)
		}
		fc, err := r.cl.ReadFile(ctx, r.wsID, cairn.FileReadParams{Path: r.path, Offset: r.offset, Length: want})
		if err != nil {
			return err
		}
		if r.gate != nil {
			if bad := r.gate.check(fc.Data); bad >= 0 {
				return usagef("'%s' is not text: byte %d is binary or a terminal control; "+
					"pass --force to write it to the terminal anyway, or redirect stdout", r.path, r.offset+int64(bad))
			}
		}
		if _, err := w.Write(fc.Data); err != nil {
			return err
		}
		n := int64(len(fc.Data))
		r.offset += n
		if r.left > 0 {
			r.left -= n
		}
		if n < want || fc.Size > 0 && r.offset >= fc.Size {
			return nil
		}
	}
	return nil
}

// textGate tells text a terminal may be given from bytes it must not be:
// not UTF-8, NUL, and the controls it acts on (tab and newline are text,
// as in the TUI; carriage return stays for CRLF text). It sees a file read
// by read, so a rune cut between two reads is carried over, and a start
// inside a rune (an --offset) is skipped.
type textGate struct {
	carry    []byte
	skipLead bool
}

// check returns the index in data of the first byte that is not text, or
// -1 when every byte is (a rune cut at the end waits for the next read).
func (g *textGate) check(data []byte) int {
	start := 0
	if g.skipLead {
		g.skipLead = false
		for start < min(len(data), utf8.UTFMax-1) && !utf8.RuneStart(data[start]) {
			start++
		}
	}
	if len(g.carry) > 0 {
		head := append(g.carry, data[:min(len(data), utf8.UTFMax)]...)
		if !utf8.FullRune(head) {
			g.carry = head
			return -1
		}
		r, size := utf8.DecodeRune(head)
		if !textRune(r, size) {
			return 0
		}
		start, g.carry = size-len(g.carry), nil
	}
	for i := start; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && !utf8.FullRune(data[i:]) {
			g.carry = append([]byte(nil), data[i:]...)
			return -1
		}
		if !textRune(r, size) {
			return i
		}
		i += size
	}
	return -1
}

// textRune reports a rune a terminal shows rather than acts on.
func textRune(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size <= 1, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return false
	case r < 0x20:
		return r == '\t' || r == '\n' || r == '\r'
	}
	return true
}

func artUnpack(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:   "unpack ART DIR",
		Short: "Unpack an archive artifact (tar.gz or zip) into DIR, a new directory of its workspace volume",
		Long: `unpack writes the entries of the archive ART into DIR, a path under
` + cairn.MountPath + ` that must not exist yet (its parent must). An unsafe
archive is refused before anything is written: absolute or escaping paths,
links out of DIR, devices and FIFOs, or more entries, bytes or compression than
the server allows (by default 10 000 entries, 10 GiB, 200:1). It unpacks into
a fresh directory beside DIR and renames it into place, so a failure leaves
nothing half done.`,
		Args:              usage(cobra.ExactArgs(2)),
		ValidArgsFunction: c.completeArtifacts,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			id, err := artifactID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			res, err := cl.UnpackArtifact(cmd.Context(), id, args[1])
			if err != nil {
				return err
			}
			return c.emit(unpackView(res))
		}),
	}
}

func unpackView(res *cairn.UnpackResult) view {
	return view{payload: res, names: []string{res.TargetDir}, table: func(w io.Writer, width int) {
		fields{{"Target", termkit.Sanitize(res.TargetDir)}, {"Entries", termkit.Count(int64(res.Entries))},
			{"Bytes", termkit.Size(res.Bytes) + " (" + termkit.Count(res.Bytes) + " bytes)"}}.write(w, width)
	}}
}

// archiveFormat checks --format of art save: "" (one file), tar.gz or zip.
func archiveFormat(f string) error {
	if f != "" && f != cairn.ArchiveTarGz && f != cairn.ArchiveZip {
		return usagef("--format %q: expected %s or %s", f, cairn.ArchiveTarGz, cairn.ArchiveZip)
	}
	return nil
}

// archiveName is the default name of a directory saved as an archive: its
// base and the format, made a valid name ("src" as tar.gz: "src_tar_gz"),
// the base cut to leave the suffix room.
func archiveName(dir, format string) string {
	base := client.ArtifactName(dir)
	if base == "" {
		return ""
	}
	suffix := client.ArtifactName("_" + format)
	return base[:min(len(base), cairn.MaxNameLength-len(suffix))] + suffix
}
