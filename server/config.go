package server

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn"
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
	Bucket           string       `yaml:"bucket"`
	PutURLTTLSecs    int          `yaml:"putUrlTTLSecs"`
	GetURLMaxTTLSecs int          `yaml:"getUrlMaxTTLSecs"`
	MaxObjectSize    int64        `yaml:"maxObjectSize"`
	Prefix           PrefixConfig `yaml:"prefix"`
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

// ShellConfig is `shell` (PTYSHELL.md). Only the switch exists so far.
type ShellConfig struct {
	Enable bool `yaml:"enable"`
}

// Limits of §11.1 that are not defaults.
const (
	minClientTTL      = 60
	minPresignTTLSecs = 5
	maxPresignTTLSecs = 7 * 24 * 60 * 60
	// maxObjectSizeCap is the single-part copy limit of S3: registering an
	// artifact copies its staging object in one part (API.md §16.22).
	maxObjectSizeCap = 5 << 30
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
				Prefix:           PrefixConfig{Staging: "staging", Store: "store"},
			},
			Sidecar: SidecarConfig{
				Image: "cairn-sidecar:latest", TimeoutSecs: 300, NetworkMode: "bridge", MaxConcurrent: 8,
			},
		},
		Maintenance: MaintenanceConfig{SweepIntSec: 300, ObjAgeOutSec: 3600},
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
	for _, p := range []*string{&c.Persistence.SQL.App.SSL.CAFile, &c.Auth.TokensFile} {
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

// Validate checks every rule of API.md §11.1 and returns all violations
// joined, each naming its dotted key. It reads the file system only to check
// that persistence.sql.app.ssl.caFile exists. The no-token rule of §1.6 is
// not checked here: it depends on the listeners and is the server's to
// enforce at start, with Loopback.
func (c *Config) Validate() error {
	var p configProblems
	p.appName("appName", c.AppName)
	c.Persistence.SQL.App.validate(&p)
	c.Metrics.validate(&p)
	c.API.validate(&p)
	c.Auth.validate(&p)
	if c.Workspace.VolumeType != "docker" {
		p.add("workspace.volumeType", "only %q is supported, got %q", "docker", c.Workspace.VolumeType)
	}
	c.Artifact.S3.validate(&p)
	c.Artifact.Store.validate(&p)
	c.Artifact.Sidecar.validate(&p)
	c.Maintenance.validate(&p, c.Artifact.Store.PutURLTTLSecs)
	return errors.Join(p...)
}

func (s SQLAppConfig) validate(p *configProblems) {
	const key = "persistence.sql.app"
	p.required(key+".host", s.Host)
	p.port(key+".port", s.Port, false)
	p.required(key+".db", s.DB)
	p.required(key+".user", s.User)
	if s.SSL.Enabled && s.SSL.CAFile == "" {
		p.add(key+".ssl.caFile", "required when ssl.enabled is true")
	}
	if s.SSL.CAFile == "" {
		return
	}
	if fi, err := os.Stat(s.SSL.CAFile); err != nil {
		p.add(key+".ssl.caFile", "%v", err)
	} else if fi.IsDir() {
		p.add(key+".ssl.caFile", "%s is a directory, not a file", s.SSL.CAFile)
	}
}

func (m MetricsConfig) validate(p *configProblems) {
	p.absPath("metrics.metricsEndpoint", m.MetricsEndpoint)
	p.atLeast("metrics.maxRequests", m.MaxRequests, 1)
	m.Service.validate(p, "metrics.service", false)
}

func (l ListenConfig) validate(p *configProblems, key string, localhostOK bool) {
	if !(localhostOK && strings.EqualFold(l.ListenOn, "localhost")) {
		p.ipLiteral(key+".listenOn", l.ListenOn)
	}
	// Port 0 lets the kernel pick a free port; tests rely on it.
	p.port(key+".appPort", l.AppPort, true)
	p.atLeast(key+".timeoutSecs.read", l.TimeoutSecs.Read, 1)
	p.atLeast(key+".timeoutSecs.write", l.TimeoutSecs.Write, 1)
	p.atLeast(key+".timeoutSecs.idle", l.TimeoutSecs.Idle, 1)
}

func (a APIConfig) validate(p *configProblems) {
	a.Service.validate(p, "api.service", true)
	p.absPath("api.apis.endPoint.pathPrefix", a.APIs.EndPoint.PathPrefix)
	rl := a.APIs.RequestLogging
	p.oneOf("api.apis.requestLogging.logLevel", rl.LogLevel, "warn", "info", "debug")
	p.oneOf("api.apis.requestLogging.healthLogLevel", rl.HealthLogLevel, "warn", "info", "debug")
	p.headerName("api.apis.requestLogging.requestIDHeader", rl.RequestIDHeader)
	for i, o := range a.CORS.AllowedOrigins {
		p.origin(fmt.Sprintf("api.cors.allowedOrigins[%d]", i), o)
	}
}

func (a AuthConfig) validate(p *configProblems) {
	first := make(map[string]int, len(a.Tokens))
	for i, t := range a.Tokens {
		key := fmt.Sprintf("auth.tokens[%d]", i)
		if err := cairn.ValidateName("token", t.Name); err != nil {
			p.add(key+".name", "%s", cairn.ErrorDetail(err))
		} else if j, dup := first[t.Name]; dup {
			p.add(key+".name", "token name %q is already used by auth.tokens[%d]", t.Name, j)
		} else {
			first[t.Name] = i
		}
		if !configIsSHA256Hex(t.SHA256) {
			p.add(key+".sha256", "token %q: must be 64 lowercase hex digits", t.Name)
		}
		t.validateScopes(p, key+".scopes")
	}
}

func (t TokenConfig) validateScopes(p *configProblems, key string) {
	if len(t.Scopes) == 0 {
		p.add(key, "token %q: needs at least one scope", t.Name)
	}
	for _, s := range t.Scopes {
		switch s {
		case "read", "write", "admin", "shell", "mcp":
		default:
			p.add(key, "token %q: unknown scope %q; want read, write, admin, shell or mcp", t.Name, s)
		}
	}
}

func (s S3Config) validate(p *configProblems) {
	if s.Endpoint == "" {
		p.add("artifact.s3.endpoint", "required")
	} else {
		p.endpoint("artifact.s3.endpoint", s.Endpoint)
	}
	if s.PresignEndpoint != "" {
		p.endpoint("artifact.s3.presignEndpoint", s.PresignEndpoint)
	}
	p.atLeast("artifact.s3.clientTTL", s.ClientTTL, minClientTTL)
}

func (s StoreConfig) validate(p *configProblems) {
	p.required("artifact.store.bucket", s.Bucket)
	p.between("artifact.store.putUrlTTLSecs", s.PutURLTTLSecs, minPresignTTLSecs, maxPresignTTLSecs)
	p.between("artifact.store.getUrlMaxTTLSecs", s.GetURLMaxTTLSecs, minPresignTTLSecs, maxPresignTTLSecs)
	if s.MaxObjectSize <= 0 || s.MaxObjectSize > maxObjectSizeCap {
		p.add("artifact.store.maxObjectSize", "must be between 1 and %d (5 GiB, the single-part copy limit), got %d",
			int64(maxObjectSizeCap), s.MaxObjectSize)
	}
	if s.Prefix.Base != "" {
		p.keyPrefix("artifact.store.prefix.base", s.Prefix.Base)
	}
	staging := p.keyPrefix("artifact.store.prefix.staging", s.Prefix.Staging)
	store := p.keyPrefix("artifact.store.prefix.store", s.Prefix.Store)
	// The reconciler reaps old objects under the staging prefix, so the two
	// trees must not overlap, not merely differ.
	if staging && store && configPrefixesOverlap(s.Prefix.Staging, s.Prefix.Store) {
		p.add("artifact.store.prefix.store", "%q overlaps artifact.store.prefix.staging %q; they must be distinct",
			s.Prefix.Store, s.Prefix.Staging)
	}
}

func (s SidecarConfig) validate(p *configProblems) {
	p.required("artifact.sidecar.image", s.Image)
	p.atLeast("artifact.sidecar.timeoutSecs", s.TimeoutSecs, 1)
	p.atLeast("artifact.sidecar.maxConcurrent", s.MaxConcurrent, 1)
	for i, e := range s.Envs {
		key := fmt.Sprintf("artifact.sidecar.envs[%d]", i)
		p.required(key+".name", e.Name)
		p.required(key+".value", e.Value)
		// CAIRN_* carries the sidecar's own protocol (API.md §8.2).
		if strings.HasPrefix(strings.ToUpper(e.Name), "CAIRN_") {
			p.add(key+".name", "%q: names starting with CAIRN_ are reserved", e.Name)
		}
		if strings.Contains(e.Name, "=") {
			p.add(key+".name", "%q must not contain '='", e.Name)
		}
	}
	for i, h := range s.Hosts {
		key := fmt.Sprintf("artifact.sidecar.hosts[%d]", i)
		p.required(key+".host", h.Host)
		p.ipLiteral(key+".address", h.Address)
	}
}

func (m MaintenanceConfig) validate(p *configProblems, putURLTTLSecs int) {
	p.atLeast("maintenance.sweepIntSec", m.SweepIntSec, 1)
	// An upload may be registered until its PUT URL expires plus a grace
	// minute; the reconciler must not reap the staging object before that.
	if minAge := putURLTTLSecs + putURLGraceSecs; m.ObjAgeOutSec <= 0 {
		p.add("maintenance.objAgeOutSec", "must be greater than 0, got %d", m.ObjAgeOutSec)
	} else if m.ObjAgeOutSec <= minAge {
		p.add("maintenance.objAgeOutSec",
			"must exceed artifact.store.putUrlTTLSecs + %d = %d, got %d", putURLGraceSecs, minAge, m.ObjAgeOutSec)
	}
}

// configProblems collects validation failures, each prefixed by its key.
type configProblems []error

func (p *configProblems) add(key, format string, args ...any) {
	*p = append(*p, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
}

func (p *configProblems) required(key, v string) {
	if v == "" {
		p.add(key, "required")
	}
}

func (p *configProblems) atLeast(key string, v, least int) {
	if v < least {
		p.add(key, "must be at least %d, got %d", least, v)
	}
}

func (p *configProblems) between(key string, v, lo, hi int) {
	if v < lo || v > hi {
		p.add(key, "must be between %d and %d, got %d", lo, hi, v)
	}
}

func (p *configProblems) port(key string, v int, zeroOK bool) {
	lo := 1
	if zeroOK {
		lo = 0
	}
	p.between(key, v, lo, 65535)
}

func (p *configProblems) oneOf(key, v string, allowed ...string) {
	for _, a := range allowed {
		if v == a {
			return
		}
	}
	p.add(key, "must be one of %s, got %q", strings.Join(allowed, ", "), v)
}

// appName checks a valid Docker name prefix: the name rule of API.md §1.8
// with a letter or digit first.
func (p *configProblems) appName(key, v string) {
	if cairn.ValidateName("app", v) != nil || v[0] == '-' || v[0] == '_' {
		p.add(key, "must match ^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$, got %q", v)
	}
}

func (p *configProblems) ipLiteral(key, v string) {
	if _, err := netip.ParseAddr(v); err != nil {
		p.add(key, "must be an IP address, got %q", v)
	}
}

func (p *configProblems) absPath(key, v string) {
	if !strings.HasPrefix(v, "/") {
		p.add(key, "must start with '/', got %q", v)
	}
}

// headerName checks an HTTP header field name (an RFC 9110 token).
func (p *configProblems) headerName(key, v string) {
	ok := v != ""
	for _, c := range v {
		ok = ok && c < 0x7f && (c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' ||
			strings.ContainsRune("!#$%&'*+-.^_`|~", c))
	}
	if !ok {
		p.add(key, "must be an HTTP header name, got %q", v)
	}
}

// keyPrefix checks a clean relative object-key path and reports whether it
// is one: no leading or trailing slash, no empty, "." or ".." segment.
func (p *configProblems) keyPrefix(key, v string) bool {
	if v == "" {
		p.add(key, "required")
		return false
	}
	for _, seg := range strings.Split(v, "/") {
		if seg == "" || seg == "." || seg == ".." {
			p.add(key, "must be a relative path without empty, '.' or '..' segments, got %q", v)
			return false
		}
	}
	return true
}

// origin checks a browser origin, scheme://host[:port], as matched against
// the Origin header (API.md §1.7).
func (p *configProblems) origin(key, v string) {
	u, err := url.Parse(v)
	// Rebuilding the origin from its parts drops anything else: a path, a
	// query, user info, a trailing slash.
	if err != nil || u.Hostname() == "" || !strings.EqualFold(u.Scheme+"://"+u.Host, v) || !configValidPort(u.Port(), true) {
		p.add(key, "must be scheme://host[:port] with no path, got %q", v)
	}
}

// endpoint checks a store address: host:port, or http(s)://host[:port]
// where the scheme implies a default port.
func (p *configProblems) endpoint(key, v string) {
	if strings.Contains(v, "://") {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" ||
			strings.TrimSuffix(v, "/") != u.Scheme+"://"+u.Host || !configValidPort(u.Port(), true) {
			p.add(key, "must be host:port or http(s)://host:port, got %q", v)
		}
		return
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil || host == "" || strings.Contains(host, "/") || !configValidPort(port, false) {
		p.add(key, "must be host:port or http(s)://host:port, got %q", v)
	}
}

// configValidPort reports whether s is a port number 1..65535, or empty when
// emptyOK; url.Parse checks only that a port is digits.
func configValidPort(s string, emptyOK bool) bool {
	if s == "" {
		return emptyOK
	}
	n, err := strconv.Atoi(s)
	return err == nil && n >= 1 && n <= 65535
}

func configPrefixesOverlap(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/")
}

func configIsSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
