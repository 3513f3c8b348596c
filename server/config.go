package server

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
)

// Config is the YAML configuration of a cairn server or maintainer process
// (API.md §11.1). The keys and defaults are those of the first cairn server;
// secrets are never part of it, they come from flags and the environment.
type Config struct {
	AppName     string            `yaml:"appName"`
	Persistence PersistenceConfig `yaml:"persistence"`
	Metrics     MetricsConfig     `yaml:"metrics"`
	API         APIConfig         `yaml:"api"`
	Auth        AuthConfig        `yaml:"auth"`
	Workspace   WorkspaceConfig   `yaml:"workspace"`
	Artifact    ArtifactConfig    `yaml:"artifact"`
	Maintenance MaintenanceConfig `yaml:"maintenance"`
	Shell       ShellConfig       `yaml:"shell"`
	Files       FilesConfig       `yaml:"files"`
	SSH         SSHConfig         `yaml:"ssh"`
	Kubernetes  KubernetesConfig  `yaml:"kubernetes"`
}

// FilesConfig is `files`: the browse containers that read a workspace
// volume's files, and the bounds of an unpack (ARCHITECTURE §11.1, §11.2).
type FilesConfig struct {
	Browse BrowseConfig `yaml:"browse"`
	Unpack UnpackConfig `yaml:"unpack"`
}

// BrowseConfig is `files.browse`. A browse container lives at most as
// long as a sidecar run (artifact.sidecar.timeoutSecs).
type BrowseConfig struct {
	IdleSecs      int `yaml:"idleSecs"`
	MaxContainers int `yaml:"maxContainers"`
}

// UnpackConfig is `files.unpack`.
type UnpackConfig struct {
	MaxEntries int   `yaml:"maxEntries"`
	MaxBytes   int64 `yaml:"maxBytes"`
	MaxRatio   int   `yaml:"maxRatio"`
}

// PersistenceConfig is `persistence`. Only the application database is left;
// the first server's tasking database and Redis keys are ignored.
type PersistenceConfig struct {
	SQL SQLConfig `yaml:"sql"`
}

// SQLConfig is `persistence.sql`.
type SQLConfig struct {
	App SQLAppConfig `yaml:"app"`
}

// SQLAppConfig is `persistence.sql.app`. The password is never in the file
// (`--sql-pw`).
type SQLAppConfig struct {
	Host     string    `yaml:"host"`
	Port     int       `yaml:"port"`
	DB       string    `yaml:"db"`
	User     string    `yaml:"user"`
	DebugLog bool      `yaml:"debugLog"`
	SSL      SSLConfig `yaml:"ssl"`
}

// SSLConfig is `persistence.sql.app.ssl`. Enabled means sslmode=verify-full
// against CAFile; disabled means no sslmode is requested at all.
type SSLConfig struct {
	Enabled bool   `yaml:"enabled"`
	CAFile  string `yaml:"caFile"`
}

// MetricsConfig is `metrics`: the separate, unauthenticated metrics listener.
type MetricsConfig struct {
	MetricsEndpoint string          `yaml:"metricsEndpoint"`
	MaxRequests     int             `yaml:"maxRequests"`
	Features        MetricsFeatures `yaml:"features"`
	Service         ListenConfig    `yaml:"service"`
}

// MetricsFeatures is `metrics.features`.
type MetricsFeatures struct {
	EnableAppMetrics  bool `yaml:"enableAppMetrics"`
	EnableHTTPMetrics bool `yaml:"enableHTTPMetrics"`
}

// ListenConfig is one HTTP listener. AppPort 0 asks the kernel for any free
// port, which tests use.
type ListenConfig struct {
	ListenOn    string   `yaml:"listenOn"`
	AppPort     int      `yaml:"appPort"`
	TimeoutSecs Timeouts `yaml:"timeoutSecs"`
}

// Timeouts are the http.Server read, write and idle timeouts in seconds.
type Timeouts struct {
	Read  int `yaml:"read"`
	Write int `yaml:"write"`
	Idle  int `yaml:"idle"`
}

// APIConfig is `api`: the API listener and what it serves.
type APIConfig struct {
	Service ListenConfig `yaml:"service"`
	APIs    APIsConfig   `yaml:"apis"`
	CORS    CORSConfig   `yaml:"cors"`
}

// APIsConfig is `api.apis`.
type APIsConfig struct {
	EndPoint       EndPointConfig       `yaml:"endPoint"`
	RequestLogging RequestLoggingConfig `yaml:"requestLogging"`
	MCP            MCPConfig            `yaml:"mcp"`
}

// EndPointConfig is `api.apis.endPoint`.
type EndPointConfig struct {
	PathPrefix string `yaml:"pathPrefix"`
}

// RequestLoggingConfig is `api.apis.requestLogging`.
type RequestLoggingConfig struct {
	LogLevel          string   `yaml:"logLevel"`
	HealthLogLevel    string   `yaml:"healthLogLevel"`
	RequestIDHeader   string   `yaml:"requestIDHeader"`
	SkipHeaders       []string `yaml:"skipHeaders"`
	LogRequestPayload bool     `yaml:"logRequestPayload"`
}

// MCPConfig is `api.apis.mcp`. EnableDNSRebindGuard keeps its first-server
// name but governs the Host guard of every route (API.md §1.7).
type MCPConfig struct {
	Enable               bool `yaml:"enable"`
	EnableDNSRebindGuard bool `yaml:"enableDNSRebindGuard"`
}

// CORSConfig is `api.cors`. No origins means CORS is off and every request
// carrying an Origin header is refused.
type CORSConfig struct {
	AllowedOrigins []string `yaml:"allowedOrigins"`
}

// AuthConfig is `auth`. No tokens at all means no authentication, which the
// server allows only on loopback listeners unless InsecureNoAuth is set.
type AuthConfig struct {
	Tokens         []TokenConfig `yaml:"tokens"`
	TokensFile     string        `yaml:"tokensFile"`
	InsecureNoAuth bool          `yaml:"insecureNoAuth"`
}

// TokenConfig is one accepted bearer token, stored as the lowercase hex
// SHA-256 of the token, never the token itself.
type TokenConfig struct {
	Name   string   `yaml:"name"`
	SHA256 string   `yaml:"sha256"`
	Scopes []string `yaml:"scopes"`
}

// WorkspaceConfig is `workspace`.
type WorkspaceConfig struct {
	VolumeType string `yaml:"volumeType"`
}

// ArtifactConfig is `artifact`: the object store and the transfer sidecars.
type ArtifactConfig struct {
	S3      S3Config      `yaml:"s3"`
	Store   StoreConfig   `yaml:"store"`
	Sidecar SidecarConfig `yaml:"sidecar"`
}

// S3Config is `artifact.s3`. Endpoint serves the server's own calls;
// PresignEndpoint, when set, is the address put in presigned URLs.
type S3Config struct {
	Endpoint        string `yaml:"endpoint"`
	PresignEndpoint string `yaml:"presignEndpoint"`
	UseTLS          bool   `yaml:"useTLS"`
	Region          string `yaml:"region"`
	ClientTTL       int    `yaml:"clientTTL"`
}

// StoreConfig is `artifact.store`.
type StoreConfig struct {
	Bucket           string `yaml:"bucket"`
	PutURLTTLSecs    int    `yaml:"putUrlTTLSecs"`
	GetURLMaxTTLSecs int    `yaml:"getUrlMaxTTLSecs"`
	MaxObjectSize    int64  `yaml:"maxObjectSize"`
	// MultipartThreshold: a client asking for multipart gets an upload
	// plan above this size (ARCHITECTURE §11.3); PartSize is the plan's
	// part size, grown for objects that would need over 10 000 parts.
	MultipartThreshold int64        `yaml:"multipartThreshold"`
	PartSize           int64        `yaml:"partSize"`
	Prefix             PrefixConfig `yaml:"prefix"`
}

// PrefixConfig is `artifact.store.prefix`: the key prefixes of the one bucket
// (API.md §7.4). Base is optional and leads both others.
type PrefixConfig struct {
	Base    string `yaml:"base"`
	Staging string `yaml:"staging"`
	Store   string `yaml:"store"`
}

// SidecarConfig is `artifact.sidecar`.
type SidecarConfig struct {
	Image         string      `yaml:"image"`
	TimeoutSecs   int         `yaml:"timeoutSecs"`
	NetworkMode   string      `yaml:"networkMode"`
	Envs          []EnvVar    `yaml:"envs"`
	Hosts         []HostEntry `yaml:"hosts"`
	MaxConcurrent int         `yaml:"maxConcurrent"`
}

// EnvVar is one extra environment variable of the transfer sidecars.
type EnvVar struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
}

// HostEntry is one extra /etc/hosts line of the transfer sidecars.
type HostEntry struct {
	Host    string `yaml:"host"`
	Address string `yaml:"address"`
}

// MaintenanceConfig is `maintenance`: the reconciler's period and the grace
// window of unreferenced objects.
type MaintenanceConfig struct {
	SweepIntSec  int `yaml:"sweepIntSec"`
	ObjAgeOutSec int `yaml:"objAgeOutSec"`
}

// ShellConfig is `shell` (PTYSHELL.md §9): the interactive shell, off
// unless enabled.
type ShellConfig struct {
	Enable bool `yaml:"enable"`
	// Image is a local image; it is never pulled.
	Image string `yaml:"image"`
	// Entrypoint is an argv list; empty means bash if the image has it,
	// else sh (§10).
	Entrypoint []string `yaml:"entrypoint"`
	User       string   `yaml:"user"`  // uid:gid inside the container
	Umask      string   `yaml:"umask"` // applied by the default entrypoint only
	// Envs are extra variables; never CAIRN_*, TERM or HOME.
	Envs        []EnvVar `yaml:"envs"`
	NetworkMode string   `yaml:"networkMode"`
	// DetachKeys is Docker's attach escape sequence, which the client never
	// sends (§12.6).
	DetachKeys string `yaml:"detachKeys"`
	// InstanceName labels this server's shell containers; empty means
	// <hostname>:<api port>, unique among live servers sharing a daemon
	// and stable across restarts (§7.7).
	InstanceName     string        `yaml:"instanceName"`
	ReapIntervalSecs int           `yaml:"reapIntervalSecs"`
	Limits           ShellLimits   `yaml:"limits"`
	Timeouts         ShellTimeouts `yaml:"timeouts"`
	// Replay is what a v2 shell keeps for a reattach or a watch.
	Replay ShellReplay `yaml:"replay"`
	// Record is the asciicast recording of v2 shells.
	Record ShellRecord `yaml:"record"`
}

// ShellRecord is `shell.record`: a shell's session (v1 or v2) written as
// an asciicast v2 file while it runs, stored as an artifact of its workspace
// (shell-<id>_cast, application/x-asciicast) when it ends.
type ShellRecord struct {
	// Enable records every shell; without it, only those asked for with
	// record (true in the v2 create body, record=true in the v1 query).
	Enable bool `yaml:"enable"`
	// MaxBytes bounds one recording; the rest is cut, and the artifact's
	// description says so. At most artifact.store.maxObjectSize.
	MaxBytes int64 `yaml:"maxBytes"`
	// Dir holds recordings while they are written; empty means the
	// system's temporary directory.
	Dir string `yaml:"dir"`
}

// ShellReplay is `shell.replay`: a v2 shell's virtual terminal.
type ShellReplay struct {
	// ScrollbackLines is how many lines above the screen the render
	// replays.
	ScrollbackLines int `yaml:"scrollbackLines"`
}

// ShellLimits is `shell.limits`; the session caps are per server process.
type ShellLimits struct {
	MaxSessions             int     `yaml:"maxSessions"`
	MaxSessionsPerWorkspace int     `yaml:"maxSessionsPerWorkspace"`
	MemoryMiB               int     `yaml:"memoryMiB"` // memory and memory+swap
	CPUs                    float64 `yaml:"cpus"`
	Pids                    int     `yaml:"pids"`
	Nofile                  int     `yaml:"nofile"`
	TmpfsMiB                int     `yaml:"tmpfsMiB"` // each of /tmp and $HOME
}

// ShellTimeouts is `shell.timeouts`, in seconds.
type ShellTimeouts struct {
	OpenSecs         int `yaml:"openSecs"`
	IdleSecs         int `yaml:"idleSecs"` // 0: no idle end
	IdleWarningSecs  int `yaml:"idleWarningSecs"`
	MaxLifetimeSecs  int `yaml:"maxLifetimeSecs"`
	PingIntervalSecs int `yaml:"pingIntervalSecs"`
	PongWaitSecs     int `yaml:"pongWaitSecs"`
	WriteWaitSecs    int `yaml:"writeWaitSecs"`
	StopSecs         int `yaml:"stopSecs"`
	DrainSecs        int `yaml:"drainSecs"`
	// DetachedSecs is how long a v2 shell outlives its writer's
	// connection before it ends with reason detached_timeout.
	DetachedSecs int `yaml:"detachedSecs"`
}

// DefaultShellConfig returns the defaults of PTYSHELL.md §9.
func DefaultShellConfig() ShellConfig {
	return ShellConfig{
		Image:            "cairn-shell:latest",
		User:             "0:0",
		Umask:            "0000",
		NetworkMode:      "none",
		DetachKeys:       "ctrl-],ctrl-],ctrl-],ctrl-]",
		ReapIntervalSecs: 60,
		Limits: ShellLimits{MaxSessions: 16, MaxSessionsPerWorkspace: 4, MemoryMiB: 512, CPUs: 1,
			Pids: 256, Nofile: 1024, TmpfsMiB: 64},
		Timeouts: ShellTimeouts{OpenSecs: 30, IdleSecs: 1800, IdleWarningSecs: 60, MaxLifetimeSecs: 28800,
			PingIntervalSecs: 20, PongWaitSecs: 60, WriteWaitSecs: 10, StopSecs: 3, DrainSecs: 2, DetachedSecs: 300},
		Replay: ShellReplay{ScrollbackLines: 1000},
		Record: ShellRecord{MaxBytes: 64 << 20},
	}
}

// Limits of §11.1 that are not defaults.
const (
	minClientTTL      = 60
	minPresignTTLSecs = 5
	maxPresignTTLSecs = 7 * 24 * 60 * 60
	// maxObjectSizeCap is the S3 object limit: 10 000 parts of up to
	// 5 GiB, capped by the store at 5 TiB. Register no longer copies, so
	// the 5 GiB single-part copy limit is gone.
	maxObjectSizeCap = 5 << 40
	// putURLGraceSecs is how long after the PUT URL expires an upload may
	// still be registered before the reconciler may reap it (API.md §16.2).
	putURLGraceSecs = 60
)

// DefaultConfig returns every default of API.md §11.1. Only
// artifact.s3.endpoint and artifact.store.bucket have none, so the result
// does not validate until they are set.
func DefaultConfig() Config {
	return Config{
		AppName: "cairn",
		Persistence: PersistenceConfig{SQL: SQLConfig{App: SQLAppConfig{
			Host: "127.0.0.1", Port: 5432, DB: "cairn", User: "cairn",
		}}},
		Metrics: MetricsConfig{
			MetricsEndpoint: "/metrics",
			MaxRequests:     4,
			Features:        MetricsFeatures{EnableHTTPMetrics: true},
			Service: ListenConfig{
				ListenOn: "0.0.0.0", AppPort: 3001,
				TimeoutSecs: Timeouts{Read: 60, Write: 60, Idle: 60},
			},
		},
		API: APIConfig{
			Service: ListenConfig{
				ListenOn: "0.0.0.0", AppPort: 44123,
				// Two sidecar runs of 300 s plus a minute (API.md §1.1).
				TimeoutSecs: Timeouts{Read: 60, Write: 660, Idle: 60},
			},
			APIs: APIsConfig{
				EndPoint: EndPointConfig{PathPrefix: "/"},
				RequestLogging: RequestLoggingConfig{
					LogLevel:        "warn",
					HealthLogLevel:  "debug",
					RequestIDHeader: "X-Request-ID",
					SkipHeaders: []string{
						"WWW-Authenticate", "Authorization", "Proxy-Authenticate", "Proxy-Authorization",
					},
				},
				MCP: MCPConfig{EnableDNSRebindGuard: true},
			},
		},
		Workspace: WorkspaceConfig{VolumeType: "docker"},
		Artifact: ArtifactConfig{
			S3: S3Config{UseTLS: true, ClientTTL: 3600},
			Store: StoreConfig{
				PutURLTTLSecs:    360,
				GetURLMaxTTLSecs: 900,
				MaxObjectSize:    1 << 30,
				// Measured: see README "Large files and resume".
				MultipartThreshold: 1 << 30,
				PartSize:           64 << 20,
				Prefix:             PrefixConfig{Staging: "staging", Store: "store"},
			},
			Sidecar: SidecarConfig{
				Image: "cairn-sidecar:latest", TimeoutSecs: 300, NetworkMode: "bridge", MaxConcurrent: 8,
			},
		},
		Maintenance: MaintenanceConfig{SweepIntSec: 300, ObjAgeOutSec: 3600},
		Shell:       DefaultShellConfig(),
		Files: FilesConfig{
			Browse: BrowseConfig{IdleSecs: 60, MaxContainers: 16},
			Unpack: UnpackConfig{MaxEntries: 10000, MaxBytes: 10 << 30, MaxRatio: 200},
		},
		SSH:        DefaultSSHConfig(),
		Kubernetes: DefaultKubernetesConfig(),
	}
}

// ParseConfig decodes a YAML configuration on top of DefaultConfig. It does
// not validate. A key that is absent or null keeps its default; a list given
// in the file replaces the default list.
//
// The first server's task-engine keys (tasking.*, persistence.redis.*,
// persistence.sql.tasking.*, maintenance.taskAgeOutSec) are accepted and
// ignored; when any is present the returned warnings hold exactly one
// message naming them. Any other unknown key, a duplicate key, or a value of
// the wrong type is an error naming the full dotted key; all such errors are
// returned together.
func ParseConfig(data []byte) (Config, []string, error) {
	return ParseConfigOnto(DefaultConfig(), data)
}

// ParseConfigOnto is ParseConfig on top of base instead of the defaults; the
// dev stack uses it to let a file override its own settings.
func ParseConfigOnto(base Config, data []byte) (Config, []string, error) {
	c := base
	d := configDecoder{ignored: configIgnoredKeys()}
	if err := d.decodeDocument(data, reflect.ValueOf(&c).Elem(), ""); err != nil {
		return Config{}, d.warnings(), err
	}
	// API.md §11.1: an empty network mode means the default one.
	if c.Artifact.Sidecar.NetworkMode == "" {
		c.Artifact.Sidecar.NetworkMode = "bridge"
	}
	return c, d.warnings(), nil
}

// LoadConfig reads, parses and validates the configuration file at path.
// Relative persistence.sql.app.ssl.caFile and auth.tokensFile paths are
// resolved against the file's directory and stored resolved. The tokens of
// auth.tokensFile (a YAML list of {name, sha256, scopes}) are appended to
// auth.tokens, so validation numbers them after the file's own tokens.
// Warnings are those of ParseConfig and are returned even with an error.
func LoadConfig(path string) (Config, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, nil, fmt.Errorf("read config: %w", err)
	}
	c, warnings, err := ParseConfig(data)
	if err != nil {
		return Config{}, warnings, fmt.Errorf("config %s: %w", path, err)
	}
	c.resolvePaths(filepath.Dir(path))
	if err := c.mergeTokensFile(); err != nil {
		return Config{}, warnings, fmt.Errorf("config %s: %w", path, err)
	}
	if err := c.Validate(); err != nil {
		return Config{}, warnings, fmt.Errorf("config %s: %w", path, err)
	}
	return c, warnings, nil
}

// resolvePaths makes the file paths of c relative to dir, where the
// configuration file lives, rather than to the working directory.
func (c *Config) resolvePaths(dir string) {
	for _, p := range []*string{&c.Persistence.SQL.App.SSL.CAFile, &c.Auth.TokensFile, &c.SSH.HostKeyPath} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
}

// mergeTokensFile appends the tokens of auth.tokensFile, if set, to
// auth.tokens. The file is read once, at start (API.md §16.11).
func (c *Config) mergeTokensFile() error {
	if c.Auth.TokensFile == "" {
		return nil
	}
	data, err := os.ReadFile(c.Auth.TokensFile)
	if err != nil {
		return fmt.Errorf("auth.tokensFile: %w", err)
	}
	var tokens []TokenConfig
	var d configDecoder
	if err := d.decodeDocument(data, reflect.ValueOf(&tokens).Elem(), "auth.tokensFile"); err != nil {
		return err
	}
	c.Auth.Tokens = append(c.Auth.Tokens, tokens...)
	return nil
}

// EndpointURL returns the store's URL for the server's own calls. A value
// without a scheme gets https, or http when artifact.s3.useTLS is false.
func (c *Config) EndpointURL() string {
	return c.Artifact.S3.url(c.Artifact.S3.Endpoint)
}

// PresignEndpointURL returns the store's URL as put in presigned URLs:
// artifact.s3.presignEndpoint, or the endpoint when that is unset. The scheme
// follows the same rule as EndpointURL.
func (c *Config) PresignEndpointURL() string {
	if c.Artifact.S3.PresignEndpoint == "" {
		return c.EndpointURL()
	}
	return c.Artifact.S3.url(c.Artifact.S3.PresignEndpoint)
}

func (s *S3Config) url(endpoint string) string {
	if strings.Contains(endpoint, "://") {
		return strings.TrimSuffix(endpoint, "/")
	}
	if s.UseTLS {
		return "https://" + endpoint
	}
	return "http://" + endpoint
}

// APIAddr returns the API listener's address as host:port.
func (c *Config) APIAddr() string { return c.API.Service.addr() }

// MetricsAddr returns the metrics listener's address as host:port.
func (c *Config) MetricsAddr() string { return c.Metrics.Service.addr() }

// Loopback reports whether every listener, API and metrics, is bound to a
// loopback IP literal or to localhost. Only then may the server run without
// tokens and without auth.insecureNoAuth (API.md §1.6).
func (c *Config) Loopback() bool {
	return c.API.Service.loopback() && c.Metrics.Service.loopback()
}

func (l ListenConfig) addr() string {
	return net.JoinHostPort(l.ListenOn, strconv.Itoa(l.AppPort))
}

func (l ListenConfig) loopback() bool {
	if strings.EqualFold(l.ListenOn, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(l.ListenOn)
	return err == nil && ip.IsLoopback()
}
