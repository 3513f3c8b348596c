package stack

import (
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
)

// SidecarImage returns the build context of the cairn-sidecar image: the
// static binary alone in a scratch image, as its entrypoint.
func SidecarImage(binary []byte) map[string][]byte {
	return map[string][]byte{
		"Dockerfile": []byte("FROM scratch\n" +
			"COPY cairn-sidecar /cairn-sidecar\n" +
			`ENTRYPOINT ["/cairn-sidecar"]` + "\n"),
		"cairn-sidecar": binary,
	}
}

// ShellImage returns the build context of the shell image: Debian's static
// busybox in a scratch image, its applets linked into /bin, /bin/sh as the
// entrypoint.
func ShellImage() (map[string][]byte, error) {
	var path string
	for _, p := range []string{"/usr/bin/busybox", "/bin/busybox"} {
		if fileExists(p) {
			path = p
			break
		}
	}
	if path == "" {
		return nil, fmt.Errorf("shell image: no busybox in /usr/bin or /bin; run `make deps` (or `apt-get install busybox-static`)")
	}
	if err := requireStatic(path); err != nil {
		return nil, fmt.Errorf("shell image: %w; run `apt-get install busybox-static`", err)
	}
	busybox, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("shell image: %w", err)
	}
	return map[string][]byte{
		"Dockerfile": []byte("FROM scratch\n" +
			"COPY busybox /bin/busybox\n" +
			`RUN ["/bin/busybox", "--install", "-s", "/bin"]` + "\n" +
			`ENTRYPOINT ["/bin/sh"]` + "\n"),
		"busybox": busybox,
	}, nil
}

// requireStatic fails if the ELF file at path needs a dynamic loader, which a
// scratch image does not have.
func requireStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked", path)
		}
	}
	return nil
}

// BuildSidecarBinary builds ./cmd/cairn-sidecar of the module at moduleRoot
// into outPath as a static, stripped Linux binary.
func BuildSidecarBinary(ctx context.Context, moduleRoot, outPath string) error {
	return goBuildStatic(ctx, moduleRoot, "./cmd/cairn-sidecar", outPath)
}

// goBuildStatic runs a CGO-free `go build` of pkg in dir.
func goBuildStatic(ctx context.Context, dir, pkg, outPath string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", outPath, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s: %w\n%s", pkg, err, out)
	}
	return nil
}
