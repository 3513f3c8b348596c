package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/termkit"
)

// changes is the help text shared by the commands that change the volume.
const changes = `Each change goes through the workspace's writer sidecar (the token needs
scope write), walks PATH without following a symlink (path_is_symlink), and
is made once: a change cut short is not repeated, so list the path to see
what happened. The mount root can be neither removed nor moved.`

func fsPut(c *cli) *cobra.Command {
	var mode, ifMatch string
	var createOnly bool
	cmd := &cobra.Command{
		Use:   "put WS PATH [LOCALFILE|-] [--mode 0644] [--if-match ETAG] [--create-only]",
		Short: "Write a local file (or stdin) as the whole content of a file of the workspace volume",
		Long: `put writes LOCALFILE, or stdin when it is '-' or absent, as the whole
content of the file PATH: to a temporary file beside it, renamed into place,
so a reader sees the old file or the new one, never a part. PATH's directory
must exist. A new file is mode 0666 unless --mode; a rewritten one keeps its
mode and owner unless --mode.

--if-match ETAG writes only over that version of the file (the etag of 'fs
stat' or of an earlier put; file_changed, exit 4, otherwise); --create-only
writes only a file that does not exist (target_exists, exit 4).

One write carries at most the server's files.write.maxBytes (16 MiB by
default; 'cairn info'): a larger file is refused here, before anything is
sent. Move it through an artifact instead: 'cairn art upload WS FILE', then
'cairn art load ART PATH'.

-o table prints the file as 'fs stat' does, its new etag among its fields;
-o json the change, {"path", "entry"}; -o name the path.

` + changes + `

` + volumePaths,
		Args: usage(cobra.RangeArgs(2, 3)),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 2 {
				return nil, cobra.ShellCompDirectiveDefault // LOCALFILE
			}
			return c.completeWorkspaces(cmd, args, prefix)
		},
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			p := cairn.FileWriteParams{Path: volumePath(args[1]), Mode: mode, IfMatch: ifMatch, CreateOnly: createOnly}
			if err := checkPut(p); err != nil {
				return err
			}
			id, err := workspaceID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			if p.Data, err = c.putData(cmd, cl, localArg(args)); err != nil {
				return err
			}
			ch, err := cl.WriteFile(cmd.Context(), id, p)
			if err != nil {
				return err
			}
			return c.emit(changeView(ch, c.nameText()))
		}),
	}
	modeFlag(cmd, &mode, "the file's permission bits, in octal (default: 0666 for a new file, else kept)")
	cmd.Flags().StringVar(&ifMatch, "if-match", "", "write only over the file of this etag")
	cmd.Flags().BoolVar(&createOnly, "create-only", false, "write only a file that does not exist yet")
	return cmd
}

// checkPut refuses what the server would refuse of a write before its
// input is read: stdin may be long to come.
func checkPut(p cairn.FileWriteParams) error {
	if err := checkMode(p.Mode); err != nil {
		return err
	}
	if p.IfMatch != "" && p.CreateOnly {
		return usagef("--if-match and --create-only exclude each other")
	}
	return cairn.ValidateVolumePath(p.Path)
}

// putData reads what put writes, within the server's bound of one write.
func (c *cli) putData(cmd *cobra.Command, cl *client.Client, local string) ([]byte, error) {
	info, err := cl.Info(cmd.Context())
	if err != nil {
		return nil, err
	}
	stdin := cmd.InOrStdin()
	if local == "" && isTerminal(stdin) {
		c.note("reading stdin to its end (Ctrl-D)")
	}
	return readPutInput(stdin, local, info.Bounds.FileWriteMaxBytes)
}

// localArg is put's LOCALFILE: "" for stdin.
func localArg(args []string) string {
	if len(args) < 3 || args[2] == "-" {
		return ""
	}
	return args[2]
}

// readPutInput reads what put writes, the local file name or stdin when
// name is "", and refuses more than bound bytes: a file whose size says so
// before it is read, and any input once bound+1 bytes have come, so neither
// a large file nor an endless stdin is held in memory.
func readPutInput(stdin io.Reader, name string, bound int64) ([]byte, error) {
	what, r := "stdin", stdin
	if name != "" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > bound {
			return nil, tooLargeToPut(fmt.Sprintf("'%s' is %s", name, termkit.Size(fi.Size())), bound)
		}
		what, r = "'"+name+"'", f
	}
	data, err := io.ReadAll(io.LimitReader(r, bound+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > bound {
		return nil, tooLargeToPut(what+" holds more than that", bound)
	}
	return data, nil
}

// tooLargeToPut refuses an input over the server's bound, and says how a
// larger file gets there instead.
func tooLargeToPut(what string, bound int64) error {
	return cairn.Errorf(cairn.ReasonBodyTooLarge, "a file write carries at most %s (%s bytes, the server's "+
		"files.write.maxBytes) and %s; nothing was sent. Move a larger file through an artifact: "+
		"'cairn art upload WS FILE', then 'cairn art load ART PATH'", termkit.Size(bound), termkit.Count(bound), what)
}

func fsRemove(c *cli) *cobra.Command {
	var recursive bool
	cmd := &cobra.Command{
		Use:   "rm WS PATH [-r]",
		Short: "Remove a file, a symlink or an empty directory of the workspace volume (-r: a whole directory)",
		Long: `rm removes PATH: a file, a symlink (never what it points to), or an empty
directory (directory_not_empty, exit 4, otherwise); -r removes a directory
with everything under it. It says what it removed on stderr; -o json prints
{"path"}, -o name the path.

` + changes + `

` + volumePaths,
		Args:              usage(cobra.ExactArgs(2)),
		ValidArgsFunction: c.completeWorkspaces,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			id, err := workspaceID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			ch, err := cl.RemovePath(cmd.Context(), id, cairn.FileRemoveParams{Path: volumePath(args[1]), Recursive: recursive})
			if err != nil {
				return err
			}
			c.note("removed %s", termkit.Sanitize(ch.Path))
			return c.emit(changeView(ch, c.nameText()))
		}),
	}
	cmd.Flags().BoolVarP(&recursive, "recursive", "r", false, "remove a directory with everything under it")
	return cmd
}

func fsMakeDir(c *cli) *cobra.Command {
	var parents bool
	var mode string
	cmd := &cobra.Command{
		Use:   "mkdir WS PATH [-p] [--mode 0755]",
		Short: "Make a directory of the workspace volume (-p: and its missing parents)",
		Long: `mkdir makes the directory PATH, mode 0777 unless --mode, so that every tool
container can write in it; something already there is target_exists (exit
4). -p makes the missing directories on the way too, and takes an existing
directory for done. -o table prints the directory as 'fs stat' does.

` + changes + `

` + volumePaths,
		Args:              usage(cobra.ExactArgs(2)),
		ValidArgsFunction: c.completeWorkspaces,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			if err := checkMode(mode); err != nil {
				return err
			}
			id, err := workspaceID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			ch, err := cl.MakeDir(cmd.Context(), id, cairn.MakeDirParams{Path: volumePath(args[1]), Parents: parents, Mode: mode})
			if err != nil {
				return err
			}
			return c.emit(changeView(ch, c.nameText()))
		}),
	}
	cmd.Flags().BoolVarP(&parents, "parents", "p", false, "make the missing parents too; an existing directory is done")
	modeFlag(cmd, &mode, "the directory's permission bits, in octal (default 0777)")
	return cmd
}

func fsMove(c *cli) *cobra.Command {
	var overwrite bool
	cmd := &cobra.Command{
		Use:   "mv WS FROM TO [--overwrite]",
		Short: "Rename a path of the workspace volume, atomically",
		Long: `mv renames FROM to TO in one step within the volume. TO must not exist
(target_exists, exit 4) unless --overwrite, and then a directory replaces
only an empty directory. A directory cannot move into itself. -o table
prints TO as 'fs stat' does.

` + changes + `

` + volumePaths,
		Args:              usage(cobra.ExactArgs(3)),
		ValidArgsFunction: c.completeWorkspaces,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			id, err := workspaceID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			ch, err := cl.MovePath(cmd.Context(), id, cairn.MoveParams{From: volumePath(args[1]), To: volumePath(args[2]),
				Overwrite: overwrite})
			if err != nil {
				return err
			}
			return c.emit(changeView(ch, c.nameText()))
		}),
	}
	cmd.Flags().BoolVarP(&overwrite, "overwrite", "f", false, "replace what TO names")
	return cmd
}

func modeFlag(cmd *cobra.Command, mode *string, help string) {
	cmd.Flags().StringVar(mode, "mode", "", help)
}

// checkMode refuses a --mode the server would, before anything is sent.
func checkMode(mode string) error {
	if err := cairn.ValidateFileMode(mode); err != nil {
		return usagef("--mode %q: %s", mode, cairn.ErrorDetail(err))
	}
	return nil
}

// changeView is a change's answer: the entry now at its path shown as stat
// shows it, or, after a remove, the path alone.
func changeView(ch *cairn.FileChange, name func(string) string) view {
	if ch.Entry == nil {
		return view{payload: ch, names: []string{name(ch.Path)}}
	}
	v := statView(ch.Path, ch.Entry, name)
	v.payload = ch
	return v
}
