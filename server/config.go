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

	"github.com/cairn-dev/cairn"
)

//go:generate go run ./configdoc -src . -out ../docs/configuration.md

// Config is the YAML configuration of a cairn server or maintainer process.
// The keys and defaults are those of the first cairn server; secrets are
// never part of it, they come from flags and the environment.
//
// Each field's doc comment is its entry in docs/configuration.md, which
// configdoc generates from these structs, DefaultConfig and configRules:
// write it for the operator, naming other keys by their dotted YAML path.
type Config struct {
	// A valid Docker name prefix that namespaces the volumes, containers
	// (or claims and pods) and database locks this server makes.
	AppName string `yaml:"appName"`
	// The application database, PostgreSQL. Its password is never in the
	// file: pass `--sql-pw` or set `CAIRN_APP_SQL_PASSWORD`.
	Persistence PersistenceConfig `yaml:"persistence"`
	// The metrics listener, separate from the API and without
	// authentication: Prometheus metrics, and the liveness probes of a
	// process that runs only the maintainer.
	Metrics MetricsConfig `yaml:"metrics"`
	// The API listener: the REST API, the MCP endpoint and the websockets
	// (events, shells, exec), and the guards in front of them.
	API APIConfig `yaml:"api"`
	// The process itself: how it stops.
	Server ServerConfig `yaml:"server"`
	// Bearer tokens. With none at all there is no authentication, which
	// the server allows only when every listener is on a loopback address,
	// unless `auth.insecureNoAuth` is set.
	Auth AuthConfig `yaml:"auth"`
	// Where workspace volumes live.
	Workspace WorkspaceConfig `yaml:"workspace"`
	// The S3 store that holds artifacts, and the sidecar containers that
	// move bytes between it and workspace volumes. The store's keys are
	// never in the file: pass `--s3-access-key` and `--s3-secret-key`, or
	// set `CAIRN_S3_ACCESS_KEY` and `CAIRN_S3_SECRET_KEY`.
	Artifact ArtifactConfig `yaml:"artifact"`
	// The reconciler, run by `cairn maintainer` or `cairn server
	// --with-maintainer`.
	Maintenance MaintenanceConfig `yaml:"maintenance"`
	// Interactive shells into workspaces, off unless enabled. A shell is
	// remote code execution with the workspace mounted: with the shell on,
	// the server refuses to start without `auth.tokens` when any listener
	// is off loopback, even with `auth.insecureNoAuth`.
	Shell ShellConfig `yaml:"shell"`
	// Reading a workspace volume's files, and unpacking archives into it.
	Files FilesConfig `yaml:"files"`
	// The `cairn-tui` workbench over SSH, off unless `ssh.listen` is set
	// (or `cairn server --ssh-listen` is given). Each session runs
	// cairn-tui against this server's own API with the scopes of the key
	// it signed in with. The other keys are checked only when it is on.
	SSH SSHConfig `yaml:"ssh"`
	// The Kubernetes runtime, used when `workspace.volumeType` is
	// `kubernetes`: workspace volumes are persistent volume claims,
	// sidecars and shells are pods, all in one namespace. The keys are
	// checked only then.
	Kubernetes KubernetesConfig `yaml:"kubernetes"`
	// Receivers of signed POSTs of the workspace and artifact events, sent
	// at least once from a Postgres outbox. Every replica must be given
	// the same list.
	Webhooks []WebhookConfig `yaml:"webhooks"`
	// Workspace expiry and idle archiving, run by the maintainer. Nothing
	// is deleted or archived before its warning event (`workspace.expiring`,
	// `workspace.archiving`) is `warnBeforeSecs` old.
	Lifecycle LifecycleConfig `yaml:"lifecycle"`
}

// LifecycleConfig is `lifecycle`.
type LifecycleConfig struct {
	// Seconds a new workspace lives after its last touch unless it asks
	// otherwise; 0: workspaces do not expire unless they ask.
	DefaultTTLSecs int `yaml:"defaultTTLSecs"`
	// Seconds between a warning event and the deletion or archiving it
	// announces.
	WarnBeforeSecs int `yaml:"warnBeforeSecs"`
	// Seconds without activity after which a READY volume no container
	// mounts is archived to a snapshot and removed, unless the workspace
	// says otherwise; 0: never.
	ArchiveIdleAfterSecs int `yaml:"archiveIdleAfterSecs"`
}

// FilesConfig is `files`.
type FilesConfig struct {
	// Containers that answer file listings and reads of one workspace,
	// kept warm between requests. One lives at most as long as a sidecar
	// run (`artifact.sidecar.timeoutSecs`).
	Browse BrowseConfig `yaml:"browse"`
	// Limits of unpacking an archive artifact into a volume; an archive
	// over any of them is refused and leaves nothing in the volume.
	Unpack UnpackConfig `yaml:"unpack"`
	// Changing a workspace volume's files through the API (a writer
	// container per workspace, beside its browse container).
	Write WriteConfig `yaml:"write"`
	// Watching a workspace's files for the events stream (`files=PATH`).
	Watch WatchConfig `yaml:"watch"`
}

// WatchConfig is `files.watch`.
type WatchConfig struct {
	// Milliseconds between two walks of the tree when the watcher polls;
	// 0 uses inotify (polling only where inotify cannot be had). Set it
	// for volumes whose filesystem reports no change through inotify,
	// such as NFS-backed ones: a walk costs a stat of every entry.
	PollMillis int `yaml:"pollMillis"`
}

// WriteConfig is `files.write`.
type WriteConfig struct {
	// Bytes one file write may carry; a larger file goes through an
	// artifact and a load.
	MaxBytes int64 `yaml:"maxBytes"`
}

// BrowseConfig is `files.browse`.
type BrowseConfig struct {
	// Seconds a browse container is kept without a request.
	IdleSecs int `yaml:"idleSecs"`
	// Browse containers at once, per server process; when all are taken,
	// the least recently used idle one is stopped.
	MaxContainers int `yaml:"maxContainers"`
}

// UnpackConfig is `files.unpack`.
type UnpackConfig struct {
	// Entries one archive may hold.
	MaxEntries int `yaml:"maxEntries"`
	// Bytes one archive may unpack to.
	MaxBytes int64 `yaml:"maxBytes"`
	// Unpacked bytes per archive byte, the compression ratio an archive
	// may reach.
	MaxRatio int `yaml:"maxRatio"`
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

// SQLAppConfig is `persistence.sql.app`.
type SQLAppConfig struct {
	// Database host name or address.
	Host string `yaml:"host"`
	// Database port.
	Port int `yaml:"port"`
	// Database name.
	DB string `yaml:"db"`
	// Database user.
	User string `yaml:"user"`
	// The database servers as `host:port`, a primary and its standbys in
	// any order, for a server that rides out a failover: it connects to
	// whichever of them takes writes, and when that one is lost it answers
	// 503 `database_unavailable` until a standby is promoted, then
	// reconnects to it without a restart. Each new connection tries them
	// in order, giving one that does not answer 5 s, so list the usual
	// primary first. When set, `host` and `port` are not used. Run the
	// standbys synchronous (`synchronous_standby_names`,
	// with `synchronous_commit` on) or a promotion may lose writes the
	// primary acknowledged.
	Hosts []string `yaml:"hosts"`
	// Accepted for compatibility; has no effect.
	DebugLog bool      `yaml:"debugLog"`
	SSL      SSLConfig `yaml:"ssl"`
}

// SSLConfig is `persistence.sql.app.ssl`.
type SSLConfig struct {
	// Connect with TLS, verifying the server's certificate and name
	// against `persistence.sql.app.ssl.caFile` (sslmode=verify-full). Off,
	// no sslmode is asked for at all.
	Enabled bool `yaml:"enabled"`
	// The root certificate(s) the database's certificate must chain to, a
	// PEM file that must exist; required when
	// `persistence.sql.app.ssl.enabled` is true. A relative path is taken
	// from the config file's directory.
	CAFile string `yaml:"caFile"`
}

// MetricsConfig is `metrics`.
type MetricsConfig struct {
	// The path metrics are served on; it must start with `/`.
	MetricsEndpoint string `yaml:"metricsEndpoint"`
	// Scrapes answered at once; more are refused.
	MaxRequests int             `yaml:"maxRequests"`
	Features    MetricsFeatures `yaml:"features"`
	Service     ListenConfig    `yaml:"service"`
}

// MetricsFeatures is `metrics.features`.
type MetricsFeatures struct {
	// Add the Go runtime and process collectors.
	EnableAppMetrics bool `yaml:"enableAppMetrics"`
	// Count API requests, their time and size, by method and status
	// class.
	EnableHTTPMetrics bool `yaml:"enableHTTPMetrics"`
}

// ListenConfig is one HTTP listener.
type ListenConfig struct {
	// The IP address to listen on (`0.0.0.0` for every IPv4 one); the API
	// listener also takes `localhost`. Only a loopback address or
	// `localhost` counts as loopback for the rules of `auth` and `shell`.
	ListenOn string `yaml:"listenOn"`
	// The TCP port; 0 asks the kernel for any free one.
	AppPort     int      `yaml:"appPort"`
	TimeoutSecs Timeouts `yaml:"timeoutSecs"`
}

// Timeouts are the http.Server read, write and idle timeouts in seconds.
type Timeouts struct {
	// Seconds to read a whole request, body included.
	Read int `yaml:"read"`
	// Seconds from the end of a request's headers until its answer must
	// be written.
	Write int `yaml:"write"`
	// Seconds a kept-alive connection may wait for its next request.
	Idle int `yaml:"idle"`
}

// ServerConfig is `server`.
type ServerConfig struct {
	// Seconds a stopping server (SIGTERM or Ctrl-C) gives the requests in
	// flight to finish. It stops accepting connections at once (with the
	// SSH workbench on, once its sessions have ended); shells and
	// execs end straight away with reason `server_shutdown`; a request
	// still running when the grace is over has its connection closed, and
	// the process still exits 0. Keep it under the orchestrator's own
	// grace (Kubernetes' `terminationGracePeriodSeconds`, 30 s by
	// default), which ends the process with SIGKILL.
	ShutdownGraceSecs int `yaml:"shutdownGraceSecs"`
}

// APIConfig is `api`.
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
	// The path every route is served under; it must start with `/`.
	PathPrefix string `yaml:"pathPrefix"`
}

// RequestLoggingConfig is `api.apis.requestLogging`.
type RequestLoggingConfig struct {
	// The level of the log line written for each request.
	LogLevel string `yaml:"logLevel"`
	// The level of the request log line of the liveness probes.
	HealthLogLevel string `yaml:"healthLogLevel"`
	// The header that carries a request's ID: a client's own value is
	// kept when it is printable and short enough, else the server makes
	// one; the answer carries it back.
	RequestIDHeader string `yaml:"requestIDHeader"`
	// Accepted for compatibility; has no effect, as the request log holds
	// no headers.
	SkipHeaders []string `yaml:"skipHeaders"`
	// Accepted for compatibility; has no effect, as the request log holds
	// no bodies.
	LogRequestPayload bool `yaml:"logRequestPayload"`
}

// MCPConfig is `api.apis.mcp`.
type MCPConfig struct {
	// Serve the MCP endpoint.
	Enable bool `yaml:"enable"`
	// The Host guard of every route, not only MCP's despite the name: a
	// request that reached a loopback address with a `Host` other than
	// `localhost`, a `*.localhost` name or a loopback address is refused,
	// which defeats DNS rebinding. Turn it off behind a same-host reverse
	// proxy that forwards another `Host`.
	EnableDNSRebindGuard bool `yaml:"enableDNSRebindGuard"`
	// Browser origins (`scheme://host[:port]`) allowed to call the MCP
	// endpoint, besides `api.cors.allowedOrigins`: a web-based MCP client
	// such as an inspector. The port may be `*`, any port:
	// `http://localhost:*`. Every other `Origin` is refused.
	AllowedOrigins []string `yaml:"allowedOrigins"`
}

// CORSConfig is `api.cors`.
type CORSConfig struct {
	// The browser origins (`scheme://host[:port]`, nothing more) allowed
	// to call the API, matched without regard to case. Empty turns CORS
	// off, and every request that carries an `Origin` header is refused.
	AllowedOrigins []string `yaml:"allowedOrigins"`
}

// AuthConfig is `auth`.
type AuthConfig struct {
	// The accepted bearer tokens (`cairn token new` makes one and prints
	// its entry).
	Tokens []TokenConfig `yaml:"tokens"`
	// A YAML file holding a list of more `auth.tokens` entries, read once
	// at start and added after those of the config file. A relative path
	// is taken from the config file's directory.
	TokensFile string `yaml:"tokensFile"`
	// Allow running without tokens while a listener is off loopback.
	InsecureNoAuth bool `yaml:"insecureNoAuth"`
	// How MCP clients discover where to get a token (MCP authorization,
	// OAuth 2.0 Protected Resource Metadata, RFC 9728). While
	// `api.apis.mcp.enable` is on, the server publishes the MCP endpoint's
	// metadata at `/.well-known/oauth-protected-resource` and at that path
	// followed by the endpoint's path, at the root of the host whatever
	// `api.apis.endPoint.pathPrefix` says, and the `WWW-Authenticate`
	// challenge of every 401, and of every 403 for a missing scope, points
	// at it. cairn's own tokens are unaffected.
	OAuth OAuthConfig `yaml:"oauth"`
}

// OAuthConfig is `auth.oauth`.
type OAuthConfig struct {
	// The canonical URI of the MCP endpoint as clients address it, e.g.
	// `https://cairn.example/v1/mcp`: an absolute `http` or `https` URL
	// with no user info, query, fragment, trailing slash or `%`-escape in
	// its path. Empty derives it from each request: `https` on a TLS
	// connection and `http` otherwise, the `Host` header, then the path
	// prefix and `/v1/mcp`. Set it when a proxy ends TLS or changes the
	// path, and have the proxy pass
	// `/.well-known/oauth-protected-resource` followed by this URI's path
	// to the server.
	Resource string `yaml:"resource"`
	// The issuer URLs of the OAuth authorization servers clients may get
	// tokens from, published as the metadata's `authorization_servers`
	// (left out when empty): absolute `http` or `https` URLs with no user
	// info, query or fragment.
	// While the list is not empty, OAuth 2.0 access tokens these servers
	// issue are accepted besides `auth.tokens`, which are checked first:
	// JWTs signed with RS256 or ES256 by a key of the issuer's JWKS (found
	// through its RFC 8414 metadata, or its OpenID Connect discovery
	// document), whose `iss` is one of these URLs exactly and whose `aud`
	// contains `audience`; their `scope` claim grants cairn's scopes of the
	// same names, and their actor is `oauth:` followed by their `sub`.
	AuthorizationServers []string `yaml:"authorizationServers"`
	// The value an access token's `aud` must contain: 1 to 2048 printable
	// ASCII characters without spaces. Empty means `resource`; with
	// neither set no access token is accepted. A token whose audience is
	// another resource is refused.
	Audience string `yaml:"audience"`
}

// audience is the audience access tokens must name: Audience, or else
// Resource; "" when neither is set.
// credentials counts the kinds of bearer token accepted: each static
// token, and an authorization server's access tokens, which authenticate
// as static tokens do.
func (a AuthConfig) credentials() int {
	n := len(a.Tokens)
	if a.OAuth.acceptsTokens() {
		n++
	}
	return n
}

// acceptsTokens reports whether access tokens of authorization servers
// are accepted: there are servers, and an audience to hold them to.
func (o OAuthConfig) acceptsTokens() bool {
	return len(o.AuthorizationServers) > 0 && o.audience() != ""
}

func (o OAuthConfig) audience() string {
	if o.Audience != "" {
		return o.Audience
	}
	return o.Resource
}

// TokenConfig is one accepted bearer token.
type TokenConfig struct {
	// The token's name, unique among tokens; audit events name it as the
	// actor. ASCII letters, digits, `-` and `_`.
	Name string `yaml:"name"`
	// The lowercase hex SHA-256 of the token (64 digits), never the token
	// itself.
	SHA256 string `yaml:"sha256"`
	// What the token may do; no scope implies another.
	Scopes []string `yaml:"scopes"`
}

// WorkspaceConfig is `workspace`.
type WorkspaceConfig struct {
	// The runtime of volumes, sidecars and shells: `docker` on the Docker
	// host of the server's environment (`DOCKER_HOST`, …), or `kubernetes`
	// as the `kubernetes` section says.
	VolumeType string `yaml:"volumeType"`
}

// ArtifactConfig is `artifact`.
type ArtifactConfig struct {
	S3      S3Config      `yaml:"s3"`
	Store   StoreConfig   `yaml:"store"`
	Sidecar SidecarConfig `yaml:"sidecar"`
}

// The values of artifact.s3.verify.
const (
	VerifyByStore  = "store"
	VerifyByServer = "server"
)

// S3Config is `artifact.s3`.
type S3Config struct {
	// The store's address for the server's own calls: `host:port`, or
	// `http(s)://host[:port]` with no path.
	Endpoint string `yaml:"endpoint"`
	// The store's address as written into presigned URLs, for clients
	// that reach the store by another name; empty means
	// `artifact.s3.endpoint`. Same form.
	PresignEndpoint string `yaml:"presignEndpoint"`
	// Use https for an endpoint given without a scheme.
	UseTLS bool `yaml:"useTLS"`
	// The store's region; empty means `us-east-1`.
	Region string `yaml:"region"`
	// Accepted for compatibility; has no effect.
	ClientTTL int `yaml:"clientTTL"`
	// Who checks that stored bytes are the ones a presigned URL binds:
	// `store` (the server refuses to start on a store that fails its
	// integrity probe) or `server` (the server reads back and hashes every
	// registered object itself, on a store that cannot be trusted to).
	Verify string `yaml:"verify"`
}

// StoreConfig is `artifact.store`.
type StoreConfig struct {
	// The one bucket of every object; it must already exist.
	Bucket string `yaml:"bucket"`
	// Seconds a presigned upload URL stays valid.
	PutURLTTLSecs int `yaml:"putUrlTTLSecs"`
	// The longest validity, in seconds, a client may ask of a presigned
	// download URL.
	GetURLMaxTTLSecs int `yaml:"getUrlMaxTTLSecs"`
	// The largest artifact, in bytes. The ceiling is the S3 object limit.
	MaxObjectSize int64 `yaml:"maxObjectSize"`
	// A client that asks for multipart gets an upload plan of parts for
	// an object above this many bytes.
	MultipartThreshold int64 `yaml:"multipartThreshold"`
	// The part size of an upload plan, grown for an object that would
	// need more than 10 000 parts.
	PartSize int64        `yaml:"partSize"`
	Prefix   PrefixConfig `yaml:"prefix"`
}

// PrefixConfig is `artifact.store.prefix`: the key prefixes of the one
// bucket.
type PrefixConfig struct {
	// An optional first segment of every object key, before the staging
	// and store prefixes. A relative path without empty, `.` or `..`
	// segments, like the other two.
	Base string `yaml:"base"`
	// The key prefix of uploads not yet registered; the reconciler
	// deletes old objects under it.
	Staging string `yaml:"staging"`
	// The key prefix of registered artifacts.
	Store string `yaml:"store"`
}

// SidecarConfig is `artifact.sidecar`.
type SidecarConfig struct {
	// The transfer sidecar image; the server checks at start that it is
	// there.
	Image string `yaml:"image"`
	// Seconds one sidecar run may take before it is killed.
	TimeoutSecs int `yaml:"timeoutSecs"`
	// The Docker network mode of transfer sidecars; empty means `bridge`.
	// `host` suits a store on the host's loopback in development.
	NetworkMode string `yaml:"networkMode"`
	// Extra environment variables of transfer sidecars. Both fields are
	// required; a name must not start with `CAIRN_` (in any case) or
	// hold `=`.
	Envs []EnvVar `yaml:"envs"`
	// Extra `/etc/hosts` lines of transfer sidecars.
	Hosts []HostEntry `yaml:"hosts"`
	// Sidecar runs at once, per server process.
	MaxConcurrent int `yaml:"maxConcurrent"`
}

// EnvVar is one extra environment variable of a container.
type EnvVar struct {
	// The variable's name.
	Name string `yaml:"name"`
	// The variable's value.
	Value string `yaml:"value"`
}

// HostEntry is one extra /etc/hosts line of the transfer sidecars.
type HostEntry struct {
	// The host name.
	Host string `yaml:"host"`
	// Its IP address.
	Address string `yaml:"address"`
}

// MaintenanceConfig is `maintenance`.
type MaintenanceConfig struct {
	// Seconds between the reconciler's passes.
	SweepIntSec int `yaml:"sweepIntSec"`
	// Seconds the reconciler leaves a staging, never-registered or
	// released object (or an unfinished multipart upload) before deleting
	// it.
	ObjAgeOutSec int `yaml:"objAgeOutSec"`
}

// ShellConfig is `shell`.
type ShellConfig struct {
	// Serve shells (`cairn dev` turns them on).
	Enable bool `yaml:"enable"`
	// The shell container's image, a local one: it is never pulled. The
	// server refuses to start with the shell on and the image absent.
	Image string `yaml:"image"`
	// The shell's argv; empty runs bash if the image has it, else sh.
	Entrypoint []string `yaml:"entrypoint"`
	// The user inside the container: `uid:gid`, or `user[:group]`.
	User string `yaml:"user"`
	// The umask of the shell, in octal; only the default entrypoint
	// applies it.
	Umask string `yaml:"umask"`
	// Extra environment variables of the shell; `CAIRN_*`, `TERM` and
	// `HOME` are cairn's and refused (in any case), as is a name holding
	// `=`.
	Envs []EnvVar `yaml:"envs"`
	// The Docker network mode of shell containers; `none` keeps them off
	// the network.
	NetworkMode string `yaml:"networkMode"`
	// Docker's attach escape sequence, a comma-separated list of keys
	// such as `ctrl-]` or `q`. The client never sends this sequence, so a
	// user cannot detach by accident.
	DetachKeys string `yaml:"detachKeys"`
	// Labels this server's shell containers; empty means
	// `<hostname>:<api port>`, unique among live servers sharing a Docker
	// host and stable across restarts.
	InstanceName string `yaml:"instanceName"`
	// Seconds between sweeps that collect the ends of v2 shells no server
	// saw end, remove this server's shell containers that no session owns,
	// and renew this server's liveness; a server that has not renewed for
	// three intervals is gone, and its execs are ended by another replica.
	ReapIntervalSecs int           `yaml:"reapIntervalSecs"`
	Limits           ShellLimits   `yaml:"limits"`
	Timeouts         ShellTimeouts `yaml:"timeouts"`
	// What a shell keeps for a reattach or a watch.
	Replay ShellReplay `yaml:"replay"`
	// Asciicast v2 recordings of shells, written while a shell runs and
	// stored as an artifact of its workspace (`shell-<id>_cast`) when it
	// ends. `shell.record: true` (or `false`) is short for
	// `shell.record.enable`.
	Record ShellRecord `yaml:"record"`
}

// ShellRecord is `shell.record`.
type ShellRecord struct {
	// Record every shell; off, only those a client asks to record.
	Enable bool `yaml:"enable"`
	// The largest recording, in bytes; the rest is cut, and the
	// artifact's description says so.
	MaxBytes int64 `yaml:"maxBytes"`
	// Where recordings are written while they run; empty means the
	// system's temporary directory.
	Dir string `yaml:"dir"`
}

// ShellReplay is `shell.replay`: a shell's virtual terminal.
type ShellReplay struct {
	// Lines above the screen that a reattach or a watch replays.
	ScrollbackLines int `yaml:"scrollbackLines"`
}

// ShellLimits is `shell.limits`.
type ShellLimits struct {
	// Shells at once, per server process.
	MaxSessions int `yaml:"maxSessions"`
	// Shells at once on one workspace, per server process.
	MaxSessionsPerWorkspace int `yaml:"maxSessionsPerWorkspace"`
	// A shell container's memory, and its memory plus swap, in MiB.
	MemoryMiB int `yaml:"memoryMiB"`
	// A shell container's CPUs; fractions allowed.
	CPUs float64 `yaml:"cpus"`
	// Processes in a shell container.
	Pids int `yaml:"pids"`
	// Open files per process in a shell container.
	Nofile int `yaml:"nofile"`
	// The size of each of the container's `/tmp` and `$HOME`, in MiB.
	TmpfsMiB int `yaml:"tmpfsMiB"`
}

// ShellTimeouts is `shell.timeouts`, in seconds.
type ShellTimeouts struct {
	// Seconds from a shell's or an exec's request until it runs (its
	// container started, on Kubernetes within podStartTimeoutSecs too). At
	// most 300, the time a client's dial waits for the server's answer.
	OpenSecs int `yaml:"openSecs"`
	// Seconds without input before a shell ends; 0 means never. Only
	// input counts, not resizes or keepalives.
	IdleSecs int `yaml:"idleSecs"`
	// Seconds before the idle end that the client is warned; 0 means no
	// warning.
	IdleWarningSecs int `yaml:"idleWarningSecs"`
	// Seconds a shell may run in all; it bounds how long a leaked
	// container lives, so it cannot be turned off.
	MaxLifetimeSecs int `yaml:"maxLifetimeSecs"`
	// Seconds between websocket pings to the client.
	PingIntervalSecs int `yaml:"pingIntervalSecs"`
	// Seconds a silent client is waited for before it is taken as gone.
	PongWaitSecs int `yaml:"pongWaitSecs"`
	// Seconds one write to the client's websocket may take.
	WriteWaitSecs int `yaml:"writeWaitSecs"`
	// Seconds a shell's process gets to leave after SIGHUP before it is
	// killed.
	StopSecs int `yaml:"stopSecs"`
	// Seconds to wait for the end of a shell's output and its exit
	// status, once the first of the two has arrived.
	DrainSecs int `yaml:"drainSecs"`
	// Seconds a shell outlives its writer's connection, waiting for a
	// reattach, before it ends with reason `detached_timeout`.
	DetachedSecs int `yaml:"detachedSecs"`
}

// DefaultShellConfig returns the defaults of the shell section.
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

// Limits of the configuration that are not defaults.
const (
	minClientTTL      = 60
	minPresignTTLSecs = 5
	maxPresignTTLSecs = 7 * 24 * 60 * 60
	// maxObjectSizeCap is the S3 object limit: 10 000 parts of up to
	// 5 GiB, capped by the store at 5 TiB. Register no longer copies, so
	// the 5 GiB single-part copy limit is gone.
	maxObjectSizeCap = 5 << 40
	// putURLGraceSecs is how long after the PUT URL expires an upload may
	// still be registered before the reconciler may reap it.
	putURLGraceSecs = 60
	// maxShutdownGraceSecs bounds server.shutdownGraceSecs: a stop that
	// takes longer is a hang to whoever waits for it.
	maxShutdownGraceSecs = 600
)

// DefaultConfig returns every default of the configuration. Only
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
				// Two sidecar runs of 300 s plus a minute.
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
		Server:    ServerConfig{ShutdownGraceSecs: 15},
		Workspace: WorkspaceConfig{VolumeType: "docker"},
		Artifact: ArtifactConfig{
			S3: S3Config{UseTLS: true, ClientTTL: 3600, Verify: VerifyByStore},
			Store: StoreConfig{
				PutURLTTLSecs:    360,
				GetURLMaxTTLSecs: 900,
				MaxObjectSize:    1 << 30,
				// Measured: see docs/cli.md, "Large files and resume".
				MultipartThreshold: 1 << 30,
				PartSize:           64 << 20,
				Prefix:             PrefixConfig{Staging: "staging", Store: "store"},
			},
			Sidecar: SidecarConfig{
				Image: "cairn-sidecar:latest", TimeoutSecs: 300, NetworkMode: "bridge", MaxConcurrent: 8,
			},
		},
		Maintenance: MaintenanceConfig{SweepIntSec: 300, ObjAgeOutSec: 3600},
		Lifecycle:   LifecycleConfig{WarnBeforeSecs: 3600},
		Shell:       DefaultShellConfig(),
		Files: FilesConfig{
			Browse: BrowseConfig{IdleSecs: 60, MaxContainers: 16},
			Unpack: UnpackConfig{MaxEntries: 10000, MaxBytes: 10 << 30, MaxRatio: 200},
			Write:  WriteConfig{MaxBytes: cairn.DefaultMaxFileWriteBytes},
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
	// An empty network mode means the default one.
	if c.Artifact.Sidecar.NetworkMode == "" {
		c.Artifact.Sidecar.NetworkMode = "bridge"
	}
	return c, d.warnings(), nil
}

// LoadConfig reads, parses and validates the configuration file at path.
// Relative persistence.sql.app.ssl.caFile, auth.tokensFile, ssh.hostKeyPath
// and webhooks[].secretFile paths are
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
	paths := []*string{&c.Persistence.SQL.App.SSL.CAFile, &c.Auth.TokensFile, &c.SSH.HostKeyPath}
	for i := range c.Webhooks {
		paths = append(paths, &c.Webhooks[i].SecretFile)
	}
	for _, p := range paths {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
}

// mergeTokensFile appends the tokens of auth.tokensFile, if set, to
// auth.tokens. The file is read once, at start.
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
// tokens and without auth.insecureNoAuth.
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
