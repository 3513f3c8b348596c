package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/termkit"
)

// rateFlag is --rate-limit: bytes per second, as termkit.ParseSize reads
// them ("1048576", "512K", "16MiB"; every unit a power of 1024).
type rateFlag struct{ bytes int64 }

func (r *rateFlag) String() string { return strconv.FormatInt(r.bytes, 10) }
func (r *rateFlag) Type() string   { return "rate" }

func (r *rateFlag) Set(s string) error {
	n, err := termkit.ParseSize(s)
	if err != nil {
		return errors.New("expected bytes per second, like 1048576, 512K or 16MiB")
	}
	r.bytes = n
	return nil
}

// sizeFlag is a size in bytes, as termkit.ParseSize reads them.
type sizeFlag struct{ bytes int64 }

func (f *sizeFlag) String() string { return strconv.FormatInt(f.bytes, 10) }
func (f *sizeFlag) Type() string   { return "size" }

func (f *sizeFlag) Set(s string) error {
	n, err := termkit.ParseSize(s)
	if err != nil || n < 1 {
		return errors.New("expected a size, like 67108864, 64M or 1GiB")
	}
	f.bytes = n
	return nil
}

// multipartFlag adds --multipart-above: on a slow or flaky link, a smaller
// file is worth sending resumably.
func multipartFlag(cmd *cobra.Command, f *sizeFlag) {
	cmd.Flags().Var(f, "multipart-above", "send a file larger than this in parts, resumably (default 1GiB)")
}

// largeFiles is the help text on transfers in parts, shared by upload and
// replace.
const largeFiles = `A file above 1 GiB (--multipart-above) goes up in parts, --parallel at once,
and resumes: after an interruption (Ctrl-C, a lost network, a killed process)
the same command run again sends only the parts the store lacks. Its state is
kept under $XDG_STATE_HOME/cairn/uploads (default ~/.local/state/cairn/uploads)
until the artifact is registered; a file changed since starts over.`

func artUpload(c *cli) *cobra.Command {
	var name, desc, contentType string
	var rate rateFlag
	var above sizeFlag
	var parallel int
	cmd := &cobra.Command{
		Use:               "upload WS FILE [--name N] [--description D]",
		Short:             "Upload a local file as a new artifact (named after the file unless --name)",
		Long:              "upload stores FILE as a new artifact of WS, verified by its SHA-256.\n\n" + largeFiles,
		Args:              usage(cobra.ExactArgs(2)),
		ValidArgsFunction: c.completeWorkspaceThenFile,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			if err := checkParallel(parallel); err != nil {
				return err
			}
			wsID, err := workspaceID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			o := client.UploadOptions{Name: name, ContentType: contentType, RateLimit: rate.bytes, Parallel: parallel,
				MultipartAbove: above.bytes}
			if cmd.Flags().Changed("description") {
				o.Description = &desc
			}
			p := c.progress(filepath.Base(args[1]))
			p.upload(&o)
			a, err := cl.Upload(cmd.Context(), wsID, args[1], o)
			p.end()
			if err != nil {
				return err
			}
			return c.emit(artifactView(artPayload{a}, a))
		}),
	}
	cmd.Flags().StringVar(&name, "name", "", "artifact name (default: the file name, '.' and other characters made '_')")
	cmd.Flags().StringVar(&desc, "description", "", "free text, at most 4 KiB")
	cmd.Flags().StringVar(&contentType, "content-type", "", "Content-Type to sign into the upload (the server sniffs the stored type)")
	cmd.Flags().Var(&rate, "rate-limit", "at most this many bytes per second (e.g. 16MiB; 0: no limit)")
	parallelFlag(cmd, &parallel, "parts")
	multipartFlag(cmd, &above)
	return cmd
}

// maxParallel bounds --parallel: more connections than this to one store
// only contend with each other.
const maxParallel = 32

// parallelFlag adds --parallel: how many parts (or ranges) move at once.
func parallelFlag(cmd *cobra.Command, n *int, what string) {
	cmd.Flags().IntVar(n, "parallel", client.DefaultParallel,
		fmt.Sprintf("how many %s of a large file move at once (1 to %d)", what, maxParallel))
}

func checkParallel(n int) error {
	if n < 1 || n > maxParallel {
		return usagef("--parallel %d: expected 1 to %d", n, maxParallel)
	}
	return nil
}

func artReplace(c *cli) *cobra.Command {
	var rate rateFlag
	var above sizeFlag
	var parallel int
	cmd := &cobra.Command{
		Use:               "replace ART FILE",
		Short:             "Replace an artifact's content with a local file (repairs a MISSING artifact)",
		Long:              "replace makes FILE the content of ART, verified by its SHA-256.\n\n" + largeFiles,
		Args:              usage(cobra.ExactArgs(2)),
		ValidArgsFunction: c.completeArtifacts,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			if err := checkParallel(parallel); err != nil {
				return err
			}
			id, err := artifactID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			o := client.UploadOptions{RateLimit: rate.bytes, Parallel: parallel, MultipartAbove: above.bytes}
			p := c.progress(filepath.Base(args[1]))
			p.upload(&o)
			a, err := cl.Replace(cmd.Context(), id, args[1], o)
			p.end()
			if err != nil {
				return err
			}
			return c.emit(artifactView(artPayload{a}, a))
		}),
	}
	cmd.Flags().Var(&rate, "rate-limit", "at most this many bytes per second (e.g. 16MiB; 0: no limit)")
	parallelFlag(cmd, &parallel, "parts")
	multipartFlag(cmd, &above)
	return cmd
}

func artDownload(c *cli) *cobra.Command {
	var overwrite bool
	var rate rateFlag
	var ttl time.Duration
	var parallel int
	cmd := &cobra.Command{
		Use:   "download ART [DEST|-] [--ttl 5m]",
		Short: "Download an artifact, verified against its size and SHA-256",
		Long: `download writes the artifact to DEST (default: the artifact's name in the
current directory; a directory DEST gets the artifact's name inside it) through
DEST.part, verified against the artifact's size and SHA-256, then renamed. A
mismatch removes the part file and fails. An existing DEST is refused unless
--overwrite. DEST '-' streams to stdout and fails at the end on a mismatch.
--ttl is how long the presigned GET it fetches stays valid.

An artifact above 64 MiB comes in ranges, --parallel at once, and resumes:
after an interruption DEST.part stays, with DEST.part.json beside it
recording the ranges done, and the same command run again fetches only the
rest (an artifact whose content changed since starts over).`,
		Args:              usage(cobra.RangeArgs(1, 2)),
		ValidArgsFunction: c.completeArtifacts,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			if cmd.Flags().Changed("ttl") && ttl <= 0 {
				return usagef("--ttl needs a positive duration")
			}
			if err := checkParallel(parallel); err != nil {
				return err
			}
			id, err := artifactID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			o := client.DownloadOptions{Overwrite: overwrite, RateLimit: rate.bytes, TTL: ttl, Parallel: parallel}
			_, name, _ := strings.Cut(args[0], "/")
			p := c.progress(firstOf(name, args[0]))
			p.download(&o)
			defer p.end()
			if len(args) == 2 && args[1] == "-" {
				_, err := cl.DownloadTo(cmd.Context(), id, c.stdout, o)
				return err
			}
			dest, err := downloadPath(cmd, cl, id, args)
			if err != nil {
				return err
			}
			a, err := cl.Download(cmd.Context(), id, dest, o)
			p.end()
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("%s exists; pass --overwrite to replace it", dest)
			}
			if err != nil {
				return err
			}
			verified := "SHA-256 verified"
			if a.SHA256B64 == nil {
				verified = "size verified; no digest was recorded"
			}
			c.note("downloaded %s to %s (%s, %s)", args[0], dest, termkit.Size(a.Size), verified)
			return c.emit(view{payload: struct {
				Artifact *cairn.Artifact `json:"artifact"`
				Path     string          `json:"path"`
			}{a, dest}, names: []string{dest}})
		}),
	}
	cmd.Flags().BoolVar(&overwrite, "overwrite", false, "replace an existing DEST")
	cmd.Flags().DurationVar(&ttl, "ttl", 0, "how long the presigned GET stays valid (default and cap: the server's maximum)")
	cmd.Flags().Var(&rate, "rate-limit", "at most this many bytes per second (e.g. 16MiB; 0: no limit)")
	parallelFlag(cmd, &parallel, "ranges")
	return cmd
}

// downloadPath is where a download goes: DEST, DEST/<name> for a
// directory, or ./<name>.
func downloadPath(cmd *cobra.Command, cl *client.Client, id string, args []string) (string, error) {
	dir := "."
	if len(args) == 2 {
		fi, err := os.Stat(args[1])
		if err != nil || !fi.IsDir() {
			return args[1], nil
		}
		dir = args[1]
	}
	d, err := cl.GetArtifact(cmd.Context(), id, cairn.ArtifactGet{})
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, d.Artifact.Name), nil
}

func artSave(c *cli) *cobra.Command {
	var name, desc, format string
	cmd := &cobra.Command{
		Use:               "save WS VOLPATH [--name N] [--format tar.gz|zip]",
		Short:             "Save a file of the workspace volume (a path under " + cairn.MountPath + ") as a new artifact; --format packs a directory",
		Args:              usage(cobra.ExactArgs(2)),
		ValidArgsFunction: c.completeWorkspaces,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			if err := archiveFormat(format); err != nil {
				return err
			}
			wsID, err := workspaceID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			vc := cairn.VolumeArtifactCreate{SourcePath: args[1], Name: name, Format: format}
			switch {
			case vc.Name == "" && format != "":
				vc.Name = archiveName(args[1], format)
			case vc.Name == "":
				vc.Name = client.ArtifactName(args[1])
			}
			if cmd.Flags().Changed("description") {
				vc.Description = &desc
			}
			a, err := cl.ArtifactFromVolume(cmd.Context(), wsID, vc)
			if err != nil {
				return err
			}
			return c.emit(artifactView(artPayload{a}, a))
		}),
	}
	cmd.Flags().StringVar(&name, "name", "", "artifact name (default: the file name, '.' and other characters made '_'; with --format, e.g. src_tar_gz)")
	cmd.Flags().StringVar(&desc, "description", "", "free text, at most 4 KiB")
	cmd.Flags().StringVar(&format, "format", "", "pack the directory VOLPATH into one archive: tar.gz or zip (links kept as links, special files refused)")
	return cmd
}

func artLoad(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:               "load ART VOLPATH",
		Short:             "Write an artifact to a file of its workspace volume (the directory must exist)",
		Args:              usage(cobra.ExactArgs(2)),
		ValidArgsFunction: c.completeArtifacts,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			id, err := artifactID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			if err := cl.LoadIntoVolume(cmd.Context(), id, args[1]); err != nil {
				return err
			}
			c.note("loaded %s into %s", args[0], args[1])
			return c.emit(view{payload: struct{}{}, names: []string{id}})
		}),
	}
}

func artUpdate(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:               "update ART VOLPATH",
		Short:             "Replace an artifact's content with a file of its workspace volume",
		Args:              usage(cobra.ExactArgs(2)),
		ValidArgsFunction: c.completeArtifacts,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			id, err := artifactID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			a, err := cl.UpdateFromVolume(cmd.Context(), id, args[1])
			if err != nil {
				return err
			}
			return c.emit(artifactView(artPayload{a}, a))
		}),
	}
}
