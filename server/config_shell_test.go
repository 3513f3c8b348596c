package server

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseShellConfig(t *testing.T) {
	t.Parallel()
	c, _, err := ParseConfig([]byte(minimalYAML + `
api: {service: {listenOn: 127.0.0.1}}
metrics: {service: {listenOn: 127.0.0.1}}
shell:
  enable: true
  image: ops-shell:1
  entrypoint: [/bin/bash, -l]
  user: "1000:1000"
  umask: "0022"
  envs: [{name: EDITOR, value: vi}]
  networkMode: bridge
  detachKeys: ctrl-x,ctrl-y
  instanceName: host-a:44123
  reapIntervalSecs: 30
  limits: {maxSessions: 2, maxSessionsPerWorkspace: 1, memoryMiB: 256, cpus: 0.5, pids: 64, nofile: 512, tmpfsMiB: 16}
  timeouts: {openSecs: 5, idleSecs: 0, idleWarningSecs: 0, maxLifetimeSecs: 3, pingIntervalSecs: 1,
             pongWaitSecs: 3, writeWaitSecs: 2, stopSecs: 1, drainSecs: 1, detachedSecs: 2}
  replay: {scrollbackLines: 50}
  record: {enable: true, maxBytes: 1048576, dir: /var/tmp/casts}
`))
	require.NoError(t, err)
	require.NoError(t, c.Validate())
	require.Equal(t, ShellConfig{
		Enable: true, Image: "ops-shell:1", Entrypoint: []string{"/bin/bash", "-l"}, User: "1000:1000", Umask: "0022",
		Envs: []EnvVar{{"EDITOR", "vi"}}, NetworkMode: "bridge", DetachKeys: "ctrl-x,ctrl-y",
		InstanceName: "host-a:44123", ReapIntervalSecs: 30,
		Limits: ShellLimits{MaxSessions: 2, MaxSessionsPerWorkspace: 1, MemoryMiB: 256, CPUs: 0.5, Pids: 64, Nofile: 512, TmpfsMiB: 16},
		Timeouts: ShellTimeouts{OpenSecs: 5, MaxLifetimeSecs: 3, PingIntervalSecs: 1, PongWaitSecs: 3,
			WriteWaitSecs: 2, StopSecs: 1, DrainSecs: 1, DetachedSecs: 2},
		Replay: ShellReplay{ScrollbackLines: 50},
		Record: ShellRecord{Enable: true, MaxBytes: 1 << 20, Dir: "/var/tmp/casts"},
	}, c.Shell)

	t.Run("AbsentKeysKeepDefaults", func(t *testing.T) {
		t.Parallel()
		c, _, err := ParseConfig([]byte(minimalYAML + "shell: {enable: true, timeouts: {idleSecs: 600}}\n"))
		require.NoError(t, err)
		want := DefaultShellConfig()
		want.Enable, want.Timeouts.IdleSecs = true, 600
		require.Equal(t, want, c.Shell)
	})
}

func TestShellRecordShorthand(t *testing.T) {
	t.Parallel()
	for doc, want := range map[string]bool{"record: true": true, "record: false": false, "record: {enable: true}": true} {
		c, _, err := ParseConfig([]byte(minimalYAML + "shell: {enable: true, " + doc + "}\n"))
		require.NoError(t, err, doc)
		require.Equal(t, want, c.Shell.Record.Enable, doc)
		require.Equal(t, DefaultShellConfig().Record.MaxBytes, c.Shell.Record.MaxBytes, "%s keeps the default size", doc)
	}
	for _, doc := range []string{"record: yes please", "record: 1", `record: "true"`} {
		_, _, err := ParseConfig([]byte(minimalYAML + "shell: {enable: true, " + doc + "}\n"))
		require.ErrorContains(t, err, `key "shell.record": `, doc)
		require.ErrorContains(t, err, "want true, false or a mapping", doc)
	}
}

func TestShellConfigValidateRejects(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		mutate func(s *ShellConfig)
		want   string
	}{
		"NoImage":             {func(s *ShellConfig) { s.Image = "" }, "shell.image: required"},
		"EmptyProgram":        {func(s *ShellConfig) { s.Entrypoint = []string{""} }, "shell.entrypoint[0]"},
		"BadUser":             {func(s *ShellConfig) { s.User = "root; rm" }, "shell.user"},
		"BadUmask":            {func(s *ShellConfig) { s.Umask = "0999" }, "shell.umask"},
		"CairnEnv":            {func(s *ShellConfig) { s.Envs = []EnvVar{{"CAIRN_SHELL_ID", "x"}} }, "shell.envs[0].name"},
		"TermEnv":             {func(s *ShellConfig) { s.Envs = []EnvVar{{"TERM", "dumb"}} }, "reserved"},
		"HomeEnv":             {func(s *ShellConfig) { s.Envs = []EnvVar{{"home", "/"}} }, "reserved"},
		"EqualsInEnv":         {func(s *ShellConfig) { s.Envs = []EnvVar{{"A=B", "x"}} }, "shell.envs[0].name"},
		"NoNetwork":           {func(s *ShellConfig) { s.NetworkMode = "" }, "shell.networkMode"},
		"BadDetachKeys":       {func(s *ShellConfig) { s.DetachKeys = "ctrl-],,x" }, "shell.detachKeys"},
		"LongInstance":        {func(s *ShellConfig) { s.InstanceName = strings.Repeat("i", 129) }, "shell.instanceName"},
		"ControlInstance":     {func(s *ShellConfig) { s.InstanceName = "a\nb" }, "shell.instanceName"},
		"NoReap":              {func(s *ShellConfig) { s.ReapIntervalSecs = 0 }, "shell.reapIntervalSecs"},
		"NoSessions":          {func(s *ShellConfig) { s.Limits.MaxSessions = 0 }, "shell.limits.maxSessions"},
		"NoPerWorkspace":      {func(s *ShellConfig) { s.Limits.MaxSessionsPerWorkspace = 0 }, "shell.limits.maxSessionsPerWorkspace"},
		"NoMemory":            {func(s *ShellConfig) { s.Limits.MemoryMiB = 0 }, "shell.limits.memoryMiB"},
		"NoCPU":               {func(s *ShellConfig) { s.Limits.CPUs = 0 }, "shell.limits.cpus"},
		"NoPids":              {func(s *ShellConfig) { s.Limits.Pids = -1 }, "shell.limits.pids"},
		"NoFiles":             {func(s *ShellConfig) { s.Limits.Nofile = 0 }, "shell.limits.nofile"},
		"NoTmpfs":             {func(s *ShellConfig) { s.Limits.TmpfsMiB = 0 }, "shell.limits.tmpfsMiB"},
		"WarningAfterIdle":    {func(s *ShellConfig) { s.Timeouts.IdleSecs, s.Timeouts.IdleWarningSecs = 60, 60 }, "shell.timeouts.idleWarningSecs"},
		"NegativeIdle":        {func(s *ShellConfig) { s.Timeouts.IdleSecs = -1 }, "shell.timeouts.idleSecs"},
		"LifetimeOff":         {func(s *ShellConfig) { s.Timeouts.MaxLifetimeSecs = 0 }, "shell.timeouts.maxLifetimeSecs"},
		"PongNotAfterPing":    {func(s *ShellConfig) { s.Timeouts.PongWaitSecs = 20 }, "shell.timeouts.pongWaitSecs"},
		"NoDetached":          {func(s *ShellConfig) { s.Timeouts.DetachedSecs = 0 }, "shell.timeouts.detachedSecs"},
		"NegativeScrollback":  {func(s *ShellConfig) { s.Replay.ScrollbackLines = -1 }, "shell.replay.scrollbackLines"},
		"HugeScrollback":      {func(s *ShellConfig) { s.Replay.ScrollbackLines = 1 << 20 }, "shell.replay.scrollbackLines"},
		"NoRecordBytes":       {func(s *ShellConfig) { s.Record.MaxBytes = 0 }, "shell.record.maxBytes: must be greater than 0"},
		"RecordOverObject":    {func(s *ShellConfig) { s.Enable, s.Record.MaxBytes = true, 1<<30+1 }, "shell.record.maxBytes: must be at most 1073741824"},
		"NoOpen":              {func(s *ShellConfig) { s.Timeouts.OpenSecs = 0 }, "shell.timeouts.openSecs"},
		"NoWriteWait":         {func(s *ShellConfig) { s.Timeouts.WriteWaitSecs = 0 }, "shell.timeouts.writeWaitSecs"},
		"NoStop":              {func(s *ShellConfig) { s.Timeouts.StopSecs = 0 }, "shell.timeouts.stopSecs"},
		"NoDrain":             {func(s *ShellConfig) { s.Timeouts.DrainSecs = 0 }, "shell.timeouts.drainSecs"},
		"NoPing":              {func(s *ShellConfig) { s.Timeouts.PingIntervalSecs = 0 }, "shell.timeouts.pingIntervalSecs"},
		"NegativeIdleWarning": {func(s *ShellConfig) { s.Timeouts.IdleWarningSecs = -1 }, "shell.timeouts.idleWarningSecs"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := validConfig()
			tc.mutate(&c.Shell)
			require.ErrorContains(t, c.Validate(), tc.want)
		})
	}
}

func TestShellConfigValidateAccepts(t *testing.T) {
	t.Parallel()
	for name, mutate := range map[string]func(c *Config){
		"Defaults":            func(c *Config) {},
		"RecordAtObjectCap":   func(c *Config) { loopback(c); c.Shell.Enable, c.Shell.Record.MaxBytes = true, 1<<30 },
		"SmallObjectsNoShell": func(c *Config) { c.Artifact.Store.MaxObjectSize = 8 << 20 },
		"IdleOff":             func(c *Config) { c.Shell.Timeouts.IdleSecs, c.Shell.Timeouts.IdleWarningSecs = 0, 600 },
		"NamedUser":           func(c *Config) { c.Shell.User = "cairn" },
		"ThreeDigitUmask":     func(c *Config) { c.Shell.Umask = "022" },
		"DockerDetachKeys":    func(c *Config) { c.Shell.DetachKeys = "ctrl-p,ctrl-q" },
		"EnabledOnLoopback":   func(c *Config) { loopback(c); c.Shell.Enable = true },
		"EnabledWithTokens": func(c *Config) {
			c.Shell.Enable = true
			c.Auth.Tokens = []TokenConfig{{"ops", testSHA256, []string{"shell"}}}
		},
		"DisabledNoAuthWide": func(c *Config) { c.Auth.InsecureNoAuth = true },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := validConfig()
			mutate(&c)
			require.NoError(t, c.Validate())
			require.False(t, c.ShellExposed())
		})
	}
}

// TestShellExposureRefused: the server refuses these at start (Open), even
// with auth.insecureNoAuth.
func TestShellExposureRefused(t *testing.T) {
	t.Parallel()
	for name, mutate := range map[string]func(c *Config){
		"NoTokensWideAPI":         func(c *Config) { loopback(c); c.API.Service.ListenOn = "0.0.0.0" },
		"NoTokensWideMetrics":     func(c *Config) { loopback(c); c.Metrics.Service.ListenOn = "10.0.0.1" },
		"InsecureNoAuthDoesNotDo": func(c *Config) { c.Auth.InsecureNoAuth = true },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := validConfig()
			mutate(&c)
			c.Shell.Enable = true
			require.True(t, c.ShellExposed())
			require.NoError(t, c.Validate(), "refused at start, not by Validate")
		})
	}
}

func loopback(c *Config) {
	c.API.Service.ListenOn, c.Metrics.Service.ListenOn = "127.0.0.1", "127.0.0.1"
}
