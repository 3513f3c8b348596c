package server

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cairn-dev/cairn"
)

// errShellExposed is the shell's start-up rule: a shell is remote code
// execution with the workspace mounted, so auth.insecureNoAuth does not
// lift it.
var errShellExposed = errors.New("the shell needs auth.tokens when any listener is not on a loopback address, " +
	"even with auth.insecureNoAuth; configure tokens (see `cairn token new`), bind every listener to 127.0.0.1, " +
	"or set shell.enable: false")

// ShellExposed reports the combination the server refuses to start with:
// the shell enabled, no tokens, and a listener off loopback. Like the no-
// token rule (auth.CheckExposure) it is checked at start, not by Validate:
// tokens may be added after the file is read (cairn dev does).
func (c *Config) ShellExposed() bool {
	return c.Shell.Enable && len(c.Auth.Tokens) == 0 && !c.Loopback()
}

var (
	shellUmask     = regexp.MustCompile(`^[0-7]{3,4}$`)
	shellUser      = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*(:[A-Za-z0-9_][A-Za-z0-9_.-]*)?$`)
	shellDetachKey = regexp.MustCompile(`^([a-zA-Z]|ctrl-[a-z@\[\\\]^_])$`)
)

// maxInstanceName bounds shell.instanceName, a label value.
const maxInstanceName = 128

func (s ShellConfig) validate(p *configProblems) {
	const key = "shell"
	p.required(key+".image", s.Image)
	for i, a := range s.Entrypoint {
		if a == "" && i == 0 {
			p.add(key+".entrypoint[0]", "the program must not be empty")
		}
	}
	if !shellUser.MatchString(s.User) {
		p.add(key+".user", "must be uid:gid (or user[:group]), got %q", s.User)
	}
	if !shellUmask.MatchString(s.Umask) {
		p.add(key+".umask", "must be 3 or 4 octal digits, got %q", s.Umask)
	}
	for i, e := range s.Envs {
		k := fmt.Sprintf("%s.envs[%d]", key, i)
		p.required(k+".name", e.Name)
		switch up := strings.ToUpper(e.Name); {
		case strings.HasPrefix(up, "CAIRN_"), up == "TERM", up == "HOME":
			p.add(k+".name", "%q is set by cairn: CAIRN_*, TERM and HOME are reserved", e.Name)
		case strings.ContainsAny(e.Name, "=\x00"):
			p.add(k+".name", "%q must not contain '=' or NUL", e.Name)
		}
	}
	p.required(key+".networkMode", s.NetworkMode)
	for _, k := range strings.Split(s.DetachKeys, ",") {
		if !shellDetachKey.MatchString(k) {
			p.add(key+".detachKeys", "must be a comma-separated list of keys such as ctrl-], got %q", s.DetachKeys)
			break
		}
	}
	if len(s.InstanceName) > maxInstanceName || strings.IndexFunc(s.InstanceName, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		p.add(key+".instanceName", "must be at most %d printable characters", maxInstanceName)
	}
	inRange(p, key+".reapIntervalSecs", s.ReapIntervalSecs)
	s.Limits.validate(p)
	s.Timeouts.validate(p)
	inRange(p, key+".replay.scrollbackLines", s.Replay.ScrollbackLines)
}

// validate checks shell.record; a recording is one PUT of at most
// maxObject bytes (artifact.store.maxObjectSize). The upper bound matters
// only with the shell enabled: a server without shells records nothing,
// and its smaller object cap must not trip over the default.
// shorthand takes `shell.record: true|false` for `shell.record.enable`.
func (r *ShellRecord) shorthand(n *yaml.Node, key string) error {
	if n.Tag != "!!bool" {
		return fmt.Errorf("%s: line %d: want true, false or a mapping, got %q", configKeyName(key), n.Line, n.Value)
	}
	return n.Decode(&r.Enable)
}

func (r ShellRecord) validate(p *configProblems, shellEnabled bool, maxObject int64) {
	const key = "shell.record.maxBytes"
	if limit := min(maxObject, cairn.MaxPartSize); inRange(p, key, r.MaxBytes) && shellEnabled && r.MaxBytes > limit {
		p.add(key, "must be at most %d (artifact.store.maxObjectSize, within one PUT), got %d", limit, r.MaxBytes)
	}
}

// maxScrollbackLines bounds a v2 shell's replay memory.
const maxScrollbackLines = 100_000

func (l ShellLimits) validate(p *configProblems) {
	const key = "shell.limits"
	inRange(p, key+".maxSessions", l.MaxSessions)
	inRange(p, key+".maxSessionsPerWorkspace", l.MaxSessionsPerWorkspace)
	inRange(p, key+".memoryMiB", l.MemoryMiB)
	inRange(p, key+".cpus", l.CPUs)
	inRange(p, key+".pids", l.Pids)
	inRange(p, key+".nofile", l.Nofile)
	inRange(p, key+".tmpfsMiB", l.TmpfsMiB)
}

func (t ShellTimeouts) validate(p *configProblems) {
	const key = "shell.timeouts"
	inRange(p, key+".openSecs", t.OpenSecs)
	inRange(p, key+".idleSecs", t.IdleSecs)
	inRange(p, key+".idleWarningSecs", t.IdleWarningSecs)
	if t.IdleSecs > 0 && t.IdleWarningSecs >= t.IdleSecs {
		p.add(key+".idleWarningSecs", "must be less than idleSecs (%d), got %d", t.IdleSecs, t.IdleWarningSecs)
	}
	// The lifetime bounds how long a leaked container can live; it cannot
	// be turned off.
	inRange(p, key+".maxLifetimeSecs", t.MaxLifetimeSecs)
	inRange(p, key+".pingIntervalSecs", t.PingIntervalSecs)
	if t.PongWaitSecs <= t.PingIntervalSecs {
		p.add(key+".pongWaitSecs", "must be greater than pingIntervalSecs (%d), got %d", t.PingIntervalSecs, t.PongWaitSecs)
	}
	inRange(p, key+".writeWaitSecs", t.WriteWaitSecs)
	inRange(p, key+".stopSecs", t.StopSecs)
	inRange(p, key+".drainSecs", t.DrainSecs)
	inRange(p, key+".detachedSecs", t.DetachedSecs)
}
